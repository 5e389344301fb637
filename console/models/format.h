#pragma once
// Text and colours shared by the console's models, so every view says a number the same way and
// a colour always means the same thing.

#include <QColor>
#include <QString>

namespace lutra::console {

// Below this readahead hit ratio a node needs a look (amber in every view).
inline constexpr double poorHitRatio = 0.8;

// "—": a value that is not known (yet).
QString unknownText();

// "3d 4h", "5h 2m", "12m 5s", "42s". A negative span (clocks apart) shows as "0s".
QString formatDuration(qint64 seconds);

// Thousands separators always as "," so what a test reads is what an admin reads anywhere.
QString formatCount(qint64 value);
QString formatCount(quint64 value);

// "1,234.5/s"; "—" for NaN (no rate yet).
QString formatRate(double perSecond);
// "1.5 GiB", "512 bytes": IEC units, the same words in every locale.
QString formatBytes(quint64 bytes);

// A ratio 0..1 as "97.3 %"; "—" for NaN.
QString formatPercent(double ratio);

// Names as admins read them: "node2" before "node10", case-insensitive, ties broken exactly.
bool naturalLess(const QString &a, const QString &b);

// The only colours the models use. Red text: failed, unreachable, an error. Amber background:
// a value that needs a look (differs, clamped, poor hit ratio). Gray text: nothing happened.
QColor errorColor();
QColor warningColor();
QColor mutedColor();

} // namespace lutra::console
