#pragma once
// The report of a per-job flush (FlushJob fanned out): node → instance, with the locks
// cancelled, pages dropped and bytes written back, and the problems worked around.

#include "core/types.h"
#include "models/tree_model.h"

namespace lutra::console {

enum class FlushState { queued, running, ok, error, unreachable };

struct FlushEntry {
    FlushState state = FlushState::queued;
    QString error; // error and unreachable
    quint64 locksCancelled = 0;
    quint64 pagesDropped = 0;
    quint64 bytesWrittenBack = 0;
    quint64 durationUs = 0;
    bool reported = false; // the numbers are known
    QStringList problems;
    quint64 historyId = 0; // nodes only

    bool operator==(const FlushEntry &other) const = default;
};

// What the whole flush did, over the nodes that reported.
struct FlushTotals {
    quint64 locks = 0;
    quint64 pages = 0;
    quint64 bytes = 0;
};

class FlushReportModel : public TreeModel<FlushEntry> {
    Q_OBJECT
public:
    enum Column {
        What,
        Status,
        LocksCancelled,
        PagesDropped,
        WrittenBack,
        Duration,
        Problems,
        ColumnCount
    };
    Q_ENUM(Column)

    enum Roles {
        SortRole = Qt::UserRole + 1, // numbers for the numeric columns
        NodeRole,
        StateRole, // int of FlushState
    };

    explicit FlushReportModel(QObject *parent = nullptr);

    // Starts a report: the nodes end in the order given, every one queued, instances gone.
    void setNodes(const QStringList &nodes);
    void setNodeRunning(const QString &node);
    // The node's row sums its instances; it is ok only when the flush and every instance were.
    void setNodeReport(const QString &node, const FlushOutcome &outcome);
    // The call failed (unreachable: the node could not be asked at all).
    void setNodeError(const QString &node, const QString &error, bool unreachable);

    int okCount() const;
    int failedCount() const; // error or unreachable
    FlushTotals totals() const;

    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    Item *nodeItem(const QString &node); // appended when not there
    // Brings the node's row and its instance rows to these, signalling only what changed.
    void setNodeEntry(Item *item, const FlushEntry &entry, const QStringList &instanceIds,
                      const QList<FlushEntry> &instances);
    QString text(const Item *item, int column) const;
    int countNodes(bool ok) const;
};

} // namespace lutra::console
