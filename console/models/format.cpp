#include "models/format.h"

#include <QLocale>

#include <cmath>

namespace lutra::console {

namespace {

const QLocale &numberLocale()
{
    static const QLocale locale(QLocale::English, QLocale::UnitedStates);
    return locale;
}

// Compares a digit run by value: leading zeros dropped, then length, then digits.
int compareDigits(QStringView a, QStringView b)
{
    while (a.size() > 1 && a.front() == u'0') {
        a = a.mid(1);
    }
    while (b.size() > 1 && b.front() == u'0') {
        b = b.mid(1);
    }
    if (a.size() != b.size()) {
        return a.size() < b.size() ? -1 : 1;
    }
    return a.compare(b);
}

qsizetype digitRunEnd(QStringView text, qsizetype from)
{
    while (from < text.size() && text[from].isDigit()) {
        ++from;
    }
    return from;
}

} // namespace

QString unknownText()
{
    return QStringLiteral("—");
}

QString formatDuration(qint64 seconds)
{
    if (seconds < 0) {
        seconds = 0;
    }
    const qint64 days = seconds / 86400;
    const qint64 hours = seconds % 86400 / 3600;
    const qint64 minutes = seconds % 3600 / 60;
    const qint64 secs = seconds % 60;
    if (days > 0) {
        return QStringLiteral("%1d %2h").arg(days).arg(hours);
    }
    if (hours > 0) {
        return QStringLiteral("%1h %2m").arg(hours).arg(minutes);
    }
    if (minutes > 0) {
        return QStringLiteral("%1m %2s").arg(minutes).arg(secs);
    }
    return QStringLiteral("%1s").arg(secs);
}

QString formatCount(qint64 value)
{
    return numberLocale().toString(value);
}

QString formatCount(quint64 value)
{
    return numberLocale().toString(value);
}

QString formatBytes(quint64 bytes)
{
    static const QLocale locale(QLocale::English, QLocale::UnitedStates);
    return locale.formattedDataSize(qint64(bytes), 1, QLocale::DataSizeIecFormat);
}

QString formatRate(double perSecond)
{
    if (std::isnan(perSecond)) {
        return unknownText();
    }
    return numberLocale().toString(perSecond, 'f', 1) + QStringLiteral("/s");
}

QString formatPercent(double ratio)
{
    if (std::isnan(ratio)) {
        return unknownText();
    }
    return QString::number(ratio * 100.0, 'f', 1) + QStringLiteral(" %");
}

bool naturalLess(const QString &a, const QString &b)
{
    qsizetype i = 0;
    qsizetype j = 0;
    while (i < a.size() && j < b.size()) {
        if (a[i].isDigit() && b[j].isDigit()) {
            const qsizetype endA = digitRunEnd(a, i);
            const qsizetype endB = digitRunEnd(b, j);
            const int order =
                compareDigits(QStringView(a).mid(i, endA - i), QStringView(b).mid(j, endB - j));
            if (order != 0) {
                return order < 0;
            }
            i = endA;
            j = endB;
            continue;
        }
        const QChar ca = a[i].toCaseFolded();
        const QChar cb = b[j].toCaseFolded();
        if (ca != cb) {
            return ca < cb;
        }
        ++i;
        ++j;
    }
    if ((a.size() - i) != (b.size() - j)) {
        return (a.size() - i) < (b.size() - j);
    }
    // Equal but for case or leading zeros: still a strict order, so sorting is stable across runs.
    return a < b;
}

QColor errorColor()
{
    return QColor(0xc0, 0x1c, 0x28);
}

QColor warningColor()
{
    return QColor(0xf6, 0xc1, 0x77);
}

QColor mutedColor()
{
    return QColor(0x80, 0x80, 0x80);
}

} // namespace lutra::console
