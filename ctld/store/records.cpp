#include "store/records.h"

#include <array>
#include <utility>

namespace lutra::ctld {

namespace {

template <typename Enum, std::size_t N>
Result<Enum> parseName(const std::array<std::pair<Enum, std::string_view>, N> &names,
                       std::string_view name, std::string_view what)
{
    for (const auto &[value, text] : names) {
        if (text == name) {
            return value;
        }
    }
    std::string message = "unknown " + std::string(what) + " '" + std::string(name) + "' (one of";
    for (const auto &[value, text] : names) {
        message += ' ';
        message += text;
    }
    message += ')';
    return Status(Errc::invalid_argument, std::move(message));
}

template <typename Enum, std::size_t N>
std::string_view nameOf(const std::array<std::pair<Enum, std::string_view>, N> &names,
                        Enum value) noexcept
{
    for (const auto &[candidate, text] : names) {
        if (candidate == value) {
            return text;
        }
    }
    return "unknown";
}

constexpr std::array<std::pair<Action, std::string_view>, 9> kActions{{
    {Action::set, "set"},
    {Action::unset, "unset"},
    {Action::apply, "apply"},
    {Action::rollback, "rollback"},
    {Action::reconcile, "reconcile"},
    {Action::flush, "flush"},
    {Action::clear, "clear"},
    {Action::profile_put, "profile_put"},
    {Action::profile_delete, "profile_delete"},
}};

constexpr std::array<std::pair<Outcome, std::string_view>, 5> kOutcomes{{
    {Outcome::pending, "pending"},
    {Outcome::ok, "ok"},
    {Outcome::partial, "partial"},
    {Outcome::error, "error"},
    {Outcome::aborted, "aborted"},
}};

constexpr std::array<std::pair<ChangeOutcome, std::string_view>, 5> kChangeOutcomes{{
    {ChangeOutcome::pending, "pending"},
    {ChangeOutcome::ok, "ok"},
    {ChangeOutcome::error, "error"},
    {ChangeOutcome::reverted, "reverted"},
    {ChangeOutcome::skipped, "skipped"},
}};

} // namespace

std::string_view actionName(Action action) noexcept
{
    return nameOf(kActions, action);
}

Result<Action> parseAction(std::string_view name)
{
    return parseName(kActions, name, "action");
}

std::string_view outcomeName(Outcome outcome) noexcept
{
    return nameOf(kOutcomes, outcome);
}

Result<Outcome> parseOutcome(std::string_view name)
{
    return parseName(kOutcomes, name, "outcome");
}

std::string_view changeOutcomeName(ChangeOutcome outcome) noexcept
{
    return nameOf(kChangeOutcomes, outcome);
}

Result<ChangeOutcome> parseChangeOutcome(std::string_view name)
{
    return parseName(kChangeOutcomes, name, "change outcome");
}

} // namespace lutra::ctld
