#include "ctld/profiles/parser.h"

#include "ctld/profiles/suggest.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <sstream>

namespace lutra::ctld::profiles {

namespace {

constexpr std::array<std::string_view, 5> kTopKeys{"name", "description", "extends", "match",
                                                   "params"};
constexpr std::array<std::string_view, 2> kMatchKeys{"nodes", "labels"};
constexpr std::size_t kMaxQuoted = 80;

std::string_view kindOf(const YAML::Node &node)
{
    switch (node.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return "a scalar";
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Undefined: break;
    }
    return "nothing";
}

bool isSingleLine(std::string_view text) noexcept
{
    return std::none_of(text.begin(), text.end(),
                        [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

// Records where the next document starts.
class DocumentStart final : public YAML::EventHandler {
public:
    std::optional<YAML::Mark> mark;

    void OnDocumentStart(const YAML::Mark &at) override { mark = at; }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark &, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark &, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark &, const std::string &, YAML::anchor_t,
                  const std::string &) override
    {
    }
    void OnSequenceStart(const YAML::Mark &, const std::string &, YAML::anchor_t,
                         YAML::EmitterStyle::value) override
    {
    }
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark &, const std::string &, YAML::anchor_t,
                    YAML::EmitterStyle::value) override
    {
    }
    void OnMapEnd() override {}
};

// Where text after the first document starts (a second document, or tokens yaml-cpp leaves
// unread, such as a stray ','), if any. Not YAML::LoadAll: it loops forever on a document that
// starts with ','.
std::optional<YAML::Mark> textAfterDocument(const std::string &text)
{
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentStart first;
    parser.HandleNextDocument(first);
    if (!parser) {
        return std::nullopt;
    }
    DocumentStart second;
    try {
        parser.HandleNextDocument(second);
    } catch (const YAML::Exception &) {
        // What is wrong inside the second document does not matter: it should not be there.
    }
    return second.mark ? second.mark : std::optional<YAML::Mark>(YAML::Mark());
}

class Parser {
public:
    explicit Parser(std::string_view source) : m_source(source)
    {
        m_result.profile.source = source;
    }

    ParseResult run(std::string_view text)
    {
        if (text.size() > kMaxProfileBytes) {
            error(Location{m_source, 0, 0},
                  "profile is larger than " + std::to_string(kMaxProfileBytes >> 10) + " KiB");
            return std::move(m_result);
        }
        try {
            const std::string copy(text);
            const YAML::Node root = YAML::Load(copy);
            if (const auto after = textAfterDocument(copy)) {
                const auto offset = static_cast<std::size_t>(std::max(after->pos, 0));
                const char c = offset < copy.size() ? copy[offset] : ' ';
                if (c == ',' || c == ']' || c == '}') {
                    // yaml-cpp skips these silently; the tree it built cannot be trusted.
                    error(toLocation(*after),
                          std::string("YAML syntax error: unexpected '") + c + "'");
                    return finish();
                }
                error(toLocation(*after),
                      "a profile file holds one YAML document; a second one starts here");
            }
            parseTop(root);
        } catch (const YAML::Exception &e) {
            // Syntax errors come with a mark; anything else yaml-cpp throws gets the file start.
            const Location where = e.mark.is_null() ? start() : toLocation(e.mark);
            error(where, "YAML syntax error: " + e.msg);
        } catch (const std::exception &e) {
            error(start(), std::string("cannot read profile: ") + e.what(), Errc::internal);
        }
        return finish();
    }

private:
    ParseResult finish()
    {
        std::stable_sort(m_result.errors.begin(), m_result.errors.end(),
                         [](const Diagnostic &a, const Diagnostic &b) {
                             return std::pair(a.location.line, a.location.column) <
                                    std::pair(b.location.line, b.location.column);
                         });
        return std::move(m_result);
    }

    Location start() const { return {m_source, 1, 1}; }

    Location toLocation(const YAML::Mark &mark) const
    {
        return {m_source, mark.line + 1, mark.column + 1};
    }

    // Null values have no useful mark of their own (yaml-cpp points at the next token), so
    // callers pass the key's location as fallback.
    Location at(const YAML::Node &node, const Location &fallback) const
    {
        if (!node.IsDefined() || node.IsNull() || node.Mark().is_null()) {
            return fallback;
        }
        return toLocation(node.Mark());
    }

    void error(Location where, std::string message, Errc code = Errc::invalid_argument)
    {
        m_result.errors.push_back({std::move(where), std::move(message), code});
    }

    // A scalar key, or an error and nullopt.
    std::optional<std::string> keyText(const YAML::Node &key, std::string_view what)
    {
        if (!key.IsScalar()) {
            error(at(key, start()),
                  std::string(what) + " must be a scalar, found " + std::string(kindOf(key)));
            return std::nullopt;
        }
        return key.Scalar();
    }

    // Tracks keys of one mapping; reports a repeated one.
    bool firstTime(std::map<std::string, int, std::less<>> &seen, const std::string &key,
                   const Location &where, std::string_view what)
    {
        const auto [found, inserted] = seen.emplace(key, where.line);
        if (!inserted) {
            error(where, "duplicate " + std::string(what) + " " + inQuotes(key) +
                             " (first at line " + std::to_string(found->second) + ")");
        }
        return inserted;
    }

    void parseTop(const YAML::Node &root)
    {
        if (!root.IsDefined() || root.IsNull()) {
            error(start(), "empty profile: expected a mapping with name, description, extends, "
                           "match and params");
            return;
        }
        if (!root.IsMap()) {
            error(at(root, start()),
                  "a profile must be a mapping with name, description, extends, match and "
                  "params, found " +
                      std::string(kindOf(root)));
            return;
        }
        std::map<std::string, int, std::less<>> seen;
        for (auto it = root.begin(); it != root.end(); ++it) {
            const Location where = at(it->first, start());
            const auto key = keyText(it->first, "a key");
            if (!key || !firstTime(seen, *key, where, "key")) {
                continue;
            }
            const YAML::Node value = it->second; // a copy: it-> yields a temporary
            if (*key == "name") {
                parseName(value, where);
            } else if (*key == "description") {
                if (const auto text = scalar(value, where, "'description'")) {
                    m_result.profile.description = *text;
                }
            } else if (*key == "extends") {
                parseExtends(value, where);
            } else if (*key == "match") {
                parseMatch(value, where);
            } else if (*key == "params") {
                parseParams(value, where);
            } else {
                unknownKey(*key, where, kTopKeys, "",
                           "name, description, extends, match or params");
            }
        }
        if (!seen.contains("name")) {
            error(start(), "missing 'name'");
        }
    }

    void unknownKey(const std::string &key, const Location &where,
                    std::span<const std::string_view> known, std::string_view inside,
                    std::string_view expected)
    {
        std::string message = "unknown key " + inQuotes(key);
        if (!inside.empty()) {
            message += " in '" + std::string(inside) + "'";
        }
        message += " (expected " + std::string(expected);
        if (const std::string close = closestWord(key, known); !close.empty()) {
            message += "; did you mean " + close + "?";
        }
        message += ")";
        error(where, std::move(message));
    }

    std::optional<std::string> scalar(const YAML::Node &node, const Location &keyWhere,
                                      std::string_view what)
    {
        if (!node.IsScalar()) {
            error(at(node, keyWhere),
                  std::string(what) + " must be a scalar, found " + std::string(kindOf(node)));
            return std::nullopt;
        }
        return node.Scalar();
    }

    void parseName(const YAML::Node &node, const Location &keyWhere)
    {
        const auto name = scalar(node, keyWhere, "'name'");
        if (!name) {
            return;
        }
        const Location where = at(node, keyWhere);
        m_result.profile.location = where;
        if (name->empty()) {
            error(where, "empty profile name");
            return;
        }
        if (!isValidProfileName(*name)) {
            error(where, "profile name " + inQuotes(*name) +
                             " may use only letters, digits, '.', '_' and '-' (at most " +
                             std::to_string(kMaxProfileNameLength) +
                             " characters, not starting with '.' or '-')");
            return;
        }
        m_result.profile.name = *name;
    }

    void addParent(const YAML::Node &item, const Location &keyWhere)
    {
        const auto name = scalar(item, keyWhere, "a parent in 'extends'");
        if (!name) {
            return;
        }
        const Location where = at(item, keyWhere);
        if (name->empty()) {
            error(where, "empty profile name in 'extends'");
            return;
        }
        auto &parents = m_result.profile.extends;
        const auto twice = std::find_if(parents.begin(), parents.end(),
                                        [&](const ParentRef &p) { return p.name == *name; });
        if (twice != parents.end()) {
            error(where, inQuotes(*name) + " is listed twice in 'extends'");
            return;
        }
        parents.push_back({*name, where});
    }

    void parseExtends(const YAML::Node &node, const Location &keyWhere)
    {
        if (node.IsSequence()) {
            if (node.size() == 0) {
                error(at(node, keyWhere), "'extends' is an empty list");
            }
            for (const auto &item : node) {
                addParent(item, at(node, keyWhere));
            }
            return;
        }
        if (!node.IsScalar()) {
            error(at(node, keyWhere), "'extends' must be a profile name or a list of them, found " +
                                          std::string(kindOf(node)));
            return;
        }
        addParent(node, keyWhere);
    }

    void addNodePattern(Match &match, std::string_view text, const Location &where)
    {
        auto pattern = NodePattern::compile(text);
        if (!pattern) {
            error(where, pattern.status().message());
            return;
        }
        match.nodes.push_back(std::move(*pattern));
    }

    void parseNodes(Match &match, const YAML::Node &node, const Location &keyWhere)
    {
        if (node.IsScalar()) {
            // One string may be a whole hostlist: "node[01-04],login1".
            const Location where = at(node, keyWhere);
            const bool plain = node.Tag() == "?"; // columns inside quoted text would be off
            for (const auto &[item, offset] : splitHostlist(node.Scalar())) {
                Location itemWhere = where;
                if (plain) {
                    itemWhere.column += static_cast<int>(offset);
                }
                addNodePattern(match, item, itemWhere);
            }
            return;
        }
        if (!node.IsSequence()) {
            error(at(node, keyWhere), "'nodes' must be a hostlist or a list of node patterns, "
                                      "found " +
                                          std::string(kindOf(node)));
            return;
        }
        if (node.size() == 0) {
            error(at(node, keyWhere), "'nodes' is an empty list: the profile would match no node");
            return;
        }
        for (const auto &item : node) {
            if (const auto text = scalar(item, at(node, keyWhere), "a node pattern")) {
                addNodePattern(match, *text, at(item, keyWhere));
            }
        }
    }

    void parseLabels(Match &match, const YAML::Node &node, const Location &keyWhere)
    {
        if (!node.IsMap()) {
            error(at(node, keyWhere), "'labels' must be a mapping of label to value, found " +
                                          std::string(kindOf(node)));
            return;
        }
        std::map<std::string, int, std::less<>> seen;
        for (auto it = node.begin(); it != node.end(); ++it) {
            const Location where = at(it->first, keyWhere);
            const auto key = keyText(it->first, "a label");
            if (!key || !firstTime(seen, *key, where, "label")) {
                continue;
            }
            const auto value = scalar(it->second, where, "label " + inQuotes(*key));
            if (value) {
                match.labels.emplace(*key, *value);
            }
        }
    }

    void parseMatch(const YAML::Node &node, const Location &keyWhere)
    {
        if (!node.IsMap()) {
            error(at(node, keyWhere), "'match' must be a mapping with nodes and/or labels, found " +
                                          std::string(kindOf(node)));
            return;
        }
        Match match;
        match.location = keyWhere;
        std::map<std::string, int, std::less<>> seen;
        for (auto it = node.begin(); it != node.end(); ++it) {
            const Location where = at(it->first, keyWhere);
            const auto key = keyText(it->first, "a key");
            if (!key || !firstTime(seen, *key, where, "key")) {
                continue;
            }
            if (*key == "nodes") {
                parseNodes(match, it->second, where);
            } else if (*key == "labels") {
                parseLabels(match, it->second, where);
            } else {
                unknownKey(*key, where, kMatchKeys, "match", "nodes or labels");
            }
        }
        m_result.profile.match = std::move(match);
    }

    void parseParams(const YAML::Node &node, const Location &keyWhere)
    {
        if (node.IsNull()) {
            return; // `params:` with nothing under it: no parameters
        }
        if (!node.IsMap()) {
            error(at(node, keyWhere),
                  "'params' must be a mapping of parameter patterns to values, found " +
                      std::string(kindOf(node)));
            return;
        }
        std::map<std::string, int, std::less<>> seen;
        for (auto it = node.begin(); it != node.end(); ++it) {
            const Location where = at(it->first, keyWhere);
            const auto pattern = keyText(it->first, "a parameter name");
            if (!pattern) {
                continue;
            }
            if (pattern->empty()) {
                error(where, "empty parameter name");
                continue;
            }
            if (!isSingleLine(*pattern)) {
                error(where,
                      "parameter name " + inQuotes(*pattern) + " contains a control character");
                continue;
            }
            if (!firstTime(seen, *pattern, where, "parameter")) {
                continue;
            }
            const YAML::Node value = it->second; // a copy: it-> yields a temporary
            if (value.IsNull()) {
                error(where, "no value for " + inQuotes(*pattern));
                continue;
            }
            if (!value.IsScalar()) {
                error(at(value, where), "value of " + inQuotes(*pattern) +
                                            " must be a scalar (a number, size or word), found " +
                                            std::string(kindOf(value)));
                continue;
            }
            const Location valueWhere = at(value, where);
            if (!isSingleLine(value.Scalar())) {
                error(valueWhere, "value of " + inQuotes(*pattern) +
                                      " must be one line of text without control characters");
                continue;
            }
            m_result.profile.params.push_back({*pattern, value.Scalar(), where, valueWhere});
        }
    }

    std::string m_source;
    ParseResult m_result;
};

} // namespace

ParseResult parseProfile(std::string_view text, std::string_view source)
{
    return Parser(source).run(text);
}

bool isValidProfileName(std::string_view name) noexcept
{
    if (name.empty() || name.size() > kMaxProfileNameLength || name.front() == '.' ||
        name.front() == '-') {
        return false;
    }
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '.' || c == '_' || c == '-';
    });
}

std::string inQuotes(std::string_view text)
{
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out = "'";
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (i == kMaxQuoted) {
            out += "...";
            break;
        }
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x20 || c == 0x7f) {
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 0xf];
        } else {
            out += static_cast<char>(c);
        }
    }
    out += "'";
    return out;
}

} // namespace lutra::ctld::profiles
