#pragma once
// How far back the charts of a view reach: the last 1, 5, 15 or 60 minutes.

#include <QComboBox>

namespace lutra::console {

class WindowPicker : public QComboBox {
    Q_OBJECT
public:
    explicit WindowPicker(int defaultMinutes, QWidget *parent = nullptr);

    qint64 windowMs() const;
    void setMinutes(int minutes);
};

} // namespace lutra::console
