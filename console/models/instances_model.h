#pragma once
// The instances of one node (targets, client mounts, bench jobs), updated in place by id.

#include "core/types.h"
#include "models/row_sync.h"

#include <QAbstractTableModel>

namespace lutra::console {

class InstancesModel : public KeyedTableModel {
    Q_OBJECT
public:
    enum Column { Id, Kind, Pid, Version, Connected, Since, Restarts, ColumnCount };
    Q_ENUM(Column)

    enum Roles {
        SortRole = Qt::UserRole + 1, // numbers for Pid, Since (seconds) and Restarts
        IdRole,
    };

    explicit InstancesModel(QObject *parent = nullptr);

    // Rows end in the order given; rows whose id stays are updated, not replaced.
    void setInstances(const QList<InstanceInfo> &instances);
    void setNowMs(qint64 nowMs);

    QList<InstanceInfo> instances() const { return m_instances; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    qint64 sinceSeconds(const InstanceInfo &instance) const; // -1 when not known

    QList<InstanceInfo> m_instances;
    qint64 m_nowMs = 0;
};

} // namespace lutra::console
