#include "app/node_picker.h"

#include "app/cluster_controller.h"

namespace lutra::console {

NodePicker::NodePicker(ClusterController &cluster, QWidget *parent)
    : QComboBox(parent), m_cluster(cluster)
{
    setSizeAdjustPolicy(QComboBox::AdjustToContents);
    connect(this, &QComboBox::currentIndexChanged, this,
            [this] { emit addressChanged(currentAddress()); });
    connect(&m_cluster, &ClusterController::nodeStateChanged, this, [this](const QString &address) {
        const int index = findData(address);
        if (index >= 0) {
            setItemText(index, m_cluster.nodeName(address));
        }
    });
    reload();
}

QString NodePicker::currentAddress() const
{
    return currentData().toString();
}

void NodePicker::setCurrentAddress(const QString &address)
{
    const int index = findData(address);
    if (index >= 0) {
        setCurrentIndex(index);
    }
}

void NodePicker::reload()
{
    const QString current = currentAddress();
    QSignalBlocker block(this);
    clear();
    for (const auto &address : m_cluster.addresses()) {
        addItem(m_cluster.nodeName(address), address);
    }
    const int index = findData(current);
    setCurrentIndex(index >= 0 ? index : 0);
    block.unblock();
    emit addressChanged(currentAddress());
}

} // namespace lutra::console
