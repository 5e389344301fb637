#pragma once
// A combo box of the cluster's nodes (ctld's node name, the address as data), kept in step with
// the controller: names replace addresses as nodes answer.

#include <QComboBox>

namespace lutra::console {

class ClusterController;

class NodePicker : public QComboBox {
    Q_OBJECT
public:
    NodePicker(ClusterController &cluster, QWidget *parent = nullptr);

    QString currentAddress() const;
    void setCurrentAddress(const QString &address);
    void reload(); // after the cluster changed

signals:
    void addressChanged(const QString &address);

private:
    ClusterController &m_cluster;
};

} // namespace lutra::console
