#include "daemon/job_stats_text.h"

#include <charconv>

namespace lutra::ctld {

namespace {

std::string_view trim(std::string_view text)
{
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
        text.remove_prefix(1);
    }
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
        text.remove_suffix(1);
    }
    return text;
}

template <typename T> bool number(std::string_view text, T *out)
{
    text = trim(text);
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
    return ec == std::errc() && end == text.data() + text.size();
}

// "{ samples: 16, unit: bytes, min: 1, max: 2, sum: 3 }"
bool parseCounter(std::string_view name, std::string_view body, params::CounterReading *counter)
{
    body = trim(body);
    if (body.size() < 2 || body.front() != '{' || body.back() != '}') {
        return false;
    }
    body = body.substr(1, body.size() - 2);
    counter->name = std::string(name);
    bool haveSamples = false;
    while (!body.empty()) {
        const auto comma = body.find(',');
        const auto field = trim(body.substr(0, comma));
        body = comma == std::string_view::npos ? std::string_view() : body.substr(comma + 1);
        const auto colon = field.find(':');
        if (colon == std::string_view::npos) {
            return false;
        }
        const auto key = trim(field.substr(0, colon));
        const auto value = trim(field.substr(colon + 1));
        std::int64_t n = 0;
        std::uint64_t u = 0;
        if (key == "samples" && number(value, &u)) {
            counter->samples = u;
            haveSamples = true;
        } else if (key == "unit") {
            counter->unit = std::string(value);
        } else if (key == "min" && number(value, &n)) {
            counter->min = n;
            counter->withMinMaxSum = true;
        } else if (key == "max" && number(value, &n)) {
            counter->max = n;
        } else if (key == "sum" && number(value, &n)) {
            counter->sum = n;
        } else {
            return false;
        }
    }
    return haveSamples;
}

} // namespace

Result<std::vector<JobStat>> parseJobStats(std::string_view text)
{
    std::vector<JobStat> jobs;
    std::size_t lineNumber = 0;
    bool header = false;
    while (!text.empty()) {
        const auto newline = text.find('\n');
        const auto line = text.substr(0, newline);
        text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
        ++lineNumber;
        const auto bad = [&](std::string_view what) {
            return Status(Errc::protocol_error, "job_stats line " + std::to_string(lineNumber) +
                                                    ": " + std::string(what));
        };
        if (trim(line).empty()) {
            continue;
        }
        if (!header) {
            if (trim(line) != "job_stats:") {
                return bad("expected 'job_stats:'");
            }
            header = true;
            continue;
        }
        if (line.starts_with("- job_id:")) {
            const auto id = trim(line.substr(9));
            if (id.empty()) {
                return bad("empty job_id");
            }
            jobs.emplace_back().jobId = std::string(id);
            continue;
        }
        if (jobs.empty() || !line.starts_with("  ")) {
            return bad("expected '- job_id:' or an indented field");
        }
        const auto field = trim(line);
        const auto colon = field.find(':');
        if (colon == std::string_view::npos) {
            return bad("expected 'name: value'");
        }
        const auto key = field.substr(0, colon);
        const auto value = trim(field.substr(colon + 1));
        if (key == "snapshot_time") {
            std::int64_t seconds = 0;
            if (!number(value.substr(0, value.find('.')), &seconds)) {
                return bad("bad snapshot_time");
            }
            jobs.back().snapshotTimeS = seconds;
        } else if (key == "start_time" || key == "elapsed_time") {
            continue;
        } else if (!parseCounter(key, value, &jobs.back().counters.emplace_back())) {
            return bad("bad counter '" + std::string(key) + "'");
        }
    }
    return jobs;
}

} // namespace lutra::ctld
