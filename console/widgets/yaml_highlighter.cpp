#include "widgets/yaml_highlighter.h"

#include <QRegularExpression>
#include <QTextDocument>

#include <algorithm>

namespace lutra::console {

namespace {

// Block state while a block scalar (`description: >-`) runs: the indentation of its key plus
// one, so lines indented deeper are text, not keys. -1 (Qt's default) or 0: no block scalar.
int indentOf(const QString &text)
{
    int indent = 0;
    while (indent < text.size() && text.at(indent) == QLatin1Char(' ')) {
        ++indent;
    }
    return indent;
}

bool isBlank(const QString &text)
{
    return text.trimmed().isEmpty();
}

bool isSpace(QChar c)
{
    return c == QLatin1Char(' ') || c == QLatin1Char('\t');
}

bool isFlowIndicator(QChar c)
{
    return c == QLatin1Char('[') || c == QLatin1Char(']') || c == QLatin1Char('{') ||
           c == QLatin1Char('}') || c == QLatin1Char(',');
}

// ':' ends a key when followed by a blank, the end of the line or (in flow) an indicator.
bool endsKey(const QString &text, int at)
{
    if (text.at(at) != QLatin1Char(':')) {
        return false;
    }
    return at + 1 >= text.size() || isSpace(text.at(at + 1)) || isFlowIndicator(text.at(at + 1));
}

// The end (exclusive) of a quoted scalar starting at `start`, or the line's end when unclosed.
int quotedEnd(const QString &text, int start)
{
    const QChar quote = text.at(start);
    for (int i = start + 1; i < text.size(); ++i) {
        if (quote == QLatin1Char('"') && text.at(i) == QLatin1Char('\\')) {
            ++i;
            continue;
        }
        if (text.at(i) == quote) {
            if (quote == QLatin1Char('\'') && i + 1 < text.size() &&
                text.at(i + 1) == QLatin1Char('\'')) {
                ++i; // '' is an escaped quote
                continue;
            }
            return i + 1;
        }
    }
    return static_cast<int>(text.size());
}

// The end (exclusive) of a plain scalar: before ": ", " #", and in flow context a ',' ']' '}'.
int plainEnd(const QString &text, int start, bool inFlow)
{
    int i = start;
    while (i < text.size()) {
        const QChar c = text.at(i);
        if (endsKey(text, i)) {
            break;
        }
        if (c == QLatin1Char('#') && i > start && isSpace(text.at(i - 1))) {
            break;
        }
        if (inFlow && (c == QLatin1Char(',') || c == QLatin1Char(']') || c == QLatin1Char('}'))) {
            break;
        }
        ++i;
    }
    while (i > start && isSpace(text.at(i - 1))) {
        --i;
    }
    return i;
}

} // namespace

YamlHighlighter::YamlHighlighter(QTextDocument *document)
    : QSyntaxHighlighter(document), m_errorColor(0xd3, 0x2f, 0x2f)
{
    m_key.setForeground(QColor(0x1a, 0x4f, 0x9c));
    m_key.setFontWeight(QFont::DemiBold);
    m_scalar.setForeground(QColor(0x2e, 0x6b, 0x30));
    m_number.setForeground(QColor(0x8a, 0x2b, 0x8f));
    m_comment.setForeground(QColor(0x80, 0x80, 0x80));
    m_comment.setFontItalic(true);
    m_punctuation.setForeground(QColor(0x60, 0x60, 0x60));
}

void YamlHighlighter::setErrors(const QList<ProfileError> &errors)
{
    m_errors = errors;
    m_errorColumns.clear();
    for (const ProfileError &error : errors) {
        if (error.line > 0) {
            m_errorColumns.insert(error.line, error.column);
        }
    }
    rehighlight();
}

int YamlHighlighter::textColumn(const QString &line, int byteColumn)
{
    int bytes = 0;
    const int wanted = std::max(byteColumn - 1, 0);
    int i = 0;
    while (i < line.size() && bytes < wanted) {
        const char32_t c = line.at(i).unicode();
        if (line.at(i).isHighSurrogate() && i + 1 < line.size()) {
            bytes += 4;
            i += 2;
            continue;
        }
        bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
        ++i;
    }
    return i;
}

YamlHighlighter::Span YamlHighlighter::errorSpan(const QString &line, int start)
{
    const int size = static_cast<int>(line.size());
    if (size == 0) {
        return {};
    }
    // A syntax error reported past the last character marks the line's last one.
    start = std::clamp(start, 0, size - 1);
    const QChar first = line.at(start);
    int end = start;
    if (first == QLatin1Char('"') || first == QLatin1Char('\'')) {
        end = quotedEnd(line, start);
    } else if (first == QLatin1Char('[') || first == QLatin1Char('{')) {
        int depth = 0;
        for (end = start; end < size; ++end) {
            const QChar c = line.at(end);
            depth += (c == QLatin1Char('[') || c == QLatin1Char('{')) ? 1 : 0;
            depth -= (c == QLatin1Char(']') || c == QLatin1Char('}')) ? 1 : 0;
            if (depth == 0) {
                ++end;
                break;
            }
        }
    } else {
        // Brackets inside a word belong to it (node[01-04]); a closing one outside ends it.
        int depth = 0;
        for (end = start; end < size; ++end) {
            const QChar c = line.at(end);
            if (isSpace(c) || endsKey(line, end)) {
                break;
            }
            if (c == QLatin1Char('[') || c == QLatin1Char('{')) {
                ++depth;
            } else if (c == QLatin1Char(']') || c == QLatin1Char('}')) {
                if (depth == 0) {
                    break;
                }
                --depth;
            } else if (c == QLatin1Char(',') && depth == 0) {
                break;
            }
        }
    }
    return {start, std::max(end - start, 1)};
}

void YamlHighlighter::highlightBlock(const QString &text)
{
    setCurrentBlockState(0);
    const int blockIndent = previousBlockState() - 1;
    if (blockIndent >= 0 && (isBlank(text) || indentOf(text) > blockIndent)) {
        // Inside a block scalar: all text, whatever it looks like.
        setFormat(0, static_cast<int>(text.size()), m_scalar);
        setCurrentBlockState(previousBlockState());
    } else {
        highlightTokens(text);
    }
    underlineErrors(text);
}

void YamlHighlighter::highlightTokens(const QString &text)
{
    const int size = static_cast<int>(text.size());
    int i = indentOf(text);
    if (text.mid(i).startsWith(QLatin1String("---")) ||
        text.mid(i).startsWith(QLatin1String("..."))) {
        setFormat(i, 3, m_punctuation);
        i += 3;
    }
    int flowDepth = 0;
    bool valueIsBlockScalar = false;
    while (i < size) {
        const QChar c = text.at(i);
        if (isSpace(c)) {
            ++i;
            continue;
        }
        if (c == QLatin1Char('#') && (i == 0 || isSpace(text.at(i - 1)))) {
            setFormat(i, size - i, m_comment);
            break;
        }
        if (isFlowIndicator(c)) {
            flowDepth += (c == QLatin1Char('[') || c == QLatin1Char('{')) ? 1 : 0;
            flowDepth -= (c == QLatin1Char(']') || c == QLatin1Char('}')) ? 1 : 0;
            setFormat(i, 1, m_punctuation);
            ++i;
            continue;
        }
        if (c == QLatin1Char('-') && (i + 1 >= size || isSpace(text.at(i + 1)))) {
            setFormat(i, 1, m_punctuation); // a sequence item
            ++i;
            continue;
        }
        if (flowDepth == 0 && (c == QLatin1Char('|') || c == QLatin1Char('>'))) {
            valueIsBlockScalar = true;
            setFormat(i, 1, m_punctuation);
            ++i;
            while (i < size && !isSpace(text.at(i))) {
                ++i; // chomping and indentation indicators: >-, |+, |2
            }
            continue;
        }
        const bool quoted = c == QLatin1Char('"') || c == QLatin1Char('\'');
        const int end = quoted ? quotedEnd(text, i) : plainEnd(text, i, flowDepth > 0);
        if (end == i) {
            setFormat(i, 1, m_punctuation); // a lone ':' or similar
            ++i;
            continue;
        }
        int next = end;
        while (next < size && isSpace(text.at(next))) {
            ++next;
        }
        if (next < size && endsKey(text, next)) {
            setFormat(i, end - i, m_key);
            setFormat(next, 1, m_punctuation);
            i = next + 1;
            continue;
        }
        formatScalar(text, i, end - i);
        i = end;
    }
    if (valueIsBlockScalar) {
        setCurrentBlockState(indentOf(text) + 1);
    }
}

void YamlHighlighter::formatScalar(const QString &text, int start, int length)
{
    // Numbers, sizes and durations as lctl writes them: 256, 16M, 1.5G, 3900s, 100ms.
    static const QRegularExpression number(
        QStringLiteral("^[-+]?[0-9]+(\\.[0-9]+)?([KMGTPkmgtp]i?[Bb]?|s|ms)?$"));
    const bool isNumber = number.match(QStringView(text).mid(start, length)).hasMatch();
    setFormat(start, length, isNumber ? m_number : m_scalar);
}

void YamlHighlighter::underlineErrors(const QString &text)
{
    const int line = currentBlock().blockNumber() + 1;
    const auto columns = m_errorColumns.values(line);
    for (const int column : columns) {
        const Span span = errorSpan(text, textColumn(text, column));
        for (int i = span.start; i < span.start + span.length; ++i) {
            // One character at a time keeps each one's own colour under the underline.
            QTextCharFormat underlined = format(i);
            underlined.setUnderlineStyle(QTextCharFormat::WaveUnderline);
            underlined.setUnderlineColor(m_errorColor);
            setFormat(i, 1, underlined);
        }
    }
}

} // namespace lutra::console
