#pragma once
// Colours for profile YAML (keys, scalars, numbers, comments) and a red wavy underline under
// each error, from the column ctld gives to the end of the token there.

#include "core/types.h"

#include <QList>
#include <QMultiHash>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>

class QTextDocument;

namespace lutra::console {

class YamlHighlighter : public QSyntaxHighlighter {
    Q_OBJECT

public:
    explicit YamlHighlighter(QTextDocument *document);

    // Re-highlights the document; errors without a line (the whole file) underline nothing.
    void setErrors(const QList<ProfileError> &errors);
    const QList<ProfileError> &errors() const { return m_errors; }

    // ctld's columns count UTF-8 bytes from 1 (yaml-cpp's marks); the index into the line's
    // QString where that byte column starts, clamped to the line.
    static int textColumn(const QString &line, int byteColumn);

    struct Span {
        int start = 0;
        int length = 0;
    };
    // What an error at index `start` of `line` underlines: the token there (a quoted string, a
    // flow collection, or a plain word up to ": ", ",", whitespace); at least one character.
    static Span errorSpan(const QString &line, int start);

protected:
    void highlightBlock(const QString &text) override;

private:
    void highlightTokens(const QString &text);
    void formatScalar(const QString &text, int start, int length);
    void underlineErrors(const QString &text);

    QList<ProfileError> m_errors;
    QMultiHash<int, int> m_errorColumns; // 1-based line -> byte column
    QTextCharFormat m_key;
    QTextCharFormat m_scalar;
    QTextCharFormat m_number;
    QTextCharFormat m_comment;
    QTextCharFormat m_punctuation;
    QColor m_errorColor;
};

} // namespace lutra::console
