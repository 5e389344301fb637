#include "app/window_picker.h"

namespace lutra::console {

WindowPicker::WindowPicker(int defaultMinutes, QWidget *parent) : QComboBox(parent)
{
    for (const int minutes : {1, 5, 15, 60}) {
        addItem(minutes < 60 ? tr("last %1 min").arg(minutes) : tr("last hour"), minutes);
    }
    setMinutes(defaultMinutes);
}

qint64 WindowPicker::windowMs() const
{
    return qint64(currentData().toInt()) * 60'000;
}

void WindowPicker::setMinutes(int minutes)
{
    const int index = findData(minutes);
    if (index >= 0) {
        setCurrentIndex(index);
    }
}

} // namespace lutra::console
