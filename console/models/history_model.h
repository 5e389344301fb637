#pragma once
// The audit trail of the selected nodes merged by time (ListHistory): point → its changes.
// Paged with fetchMore: each node is asked for one page at a time, only when the merge needs
// it, and a point is appended only once no node can still deliver a newer one — rows are only
// ever appended, never reordered.

#include "core/types.h"

#include <QAbstractItemModel>
#include <QStringList>

#include <functional>

namespace lutra::console {

class HistoryModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { Time, Node, Principal, Action, What, Outcome, Id, ColumnCount };
    Q_ENUM(Column)

    enum Roles {
        PointIdRole = Qt::UserRole + 1, // the point's id (a change: its point's)
        NodeRole,
    };

    // Answers one ListHistory call; done may be called later, on the GUI thread, exactly once.
    using Done = std::function<void(bool ok, const QString &error, const HistoryPage &page)>;
    using Fetch = std::function<void(const QString &node, const HistoryQuery &query, Done done)>;

    explicit HistoryModel(QObject *parent = nullptr);

    // Starts a new listing (a reset): nothing is fetched until fetchMore. filter.limit is the
    // page size (≤ 0: 50); beforeId is the model's own business.
    void setSource(const QStringList &nodes, const HistoryQuery &filter, Fetch fetch);

    int pendingFetches() const;
    QStringList errors() const { return m_errors; } // "node002: UNAVAILABLE: …"
    // The point of a row; for a change, the point it belongs to. nullptr for an invalid index.
    const HistoryPoint *point(const QModelIndex &index) const;
    QString nodeOf(const QModelIndex &index) const;

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    bool canFetchMore(const QModelIndex &parent) const override;
    void fetchMore(const QModelIndex &parent) override;

signals:
    void errorsChanged();
    void pendingFetchesChanged();

private:
    struct Entry {
        QString node;
        HistoryPoint point;
    };
    struct Source {
        QString node;
        QList<HistoryPoint> buffer; // fetched, not yet rows; newest first
        quint64 cursor = 0;         // beforeId of the next page
        bool more = true;           // the node may still have older points
        bool pending = false;
        bool seen = false; // oldest is set
        Entry oldest;      // the oldest point the node gave: its unseen ones come after it
    };

    // Merge order: newer first; equal times by node, then newer id first.
    static bool before(const QString &nodeA, const HistoryPoint &a, const QString &nodeB,
                       const HistoryPoint &b);
    bool waitingOn(const Source &source) const { return source.more && !source.pending; }
    void startFetch(int source);
    void onPage(int generation, int source, bool ok, const QString &error, const HistoryPage &page);
    // Releases what can be released and, while a fetchMore is unanswered, asks the nodes the
    // merge waits on. Re-entered (a synchronous fetch, a view calling fetchMore from a signal)
    // it only notes that it must run again.
    void pump();
    int release();
    QString text(const Entry &entry, int column) const;
    QString changeText(const HistoryChange &change, int column) const;

    QList<Entry> m_rows;
    QList<Source> m_sources;
    HistoryQuery m_filter;
    Fetch m_fetch;
    QStringList m_errors;
    int m_generation = 0;  // answers for an earlier setSource are dropped
    bool m_wanted = false; // fetchMore asked for rows none of which arrived yet
    bool m_pumping = false;
    bool m_pumpAgain = false;
};

} // namespace lutra::console
