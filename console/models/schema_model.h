#pragma once
// The union of every node's and instance's parameter specs (counter blocks excluded) as a tree
// of dotted name components: "osc" → "ost0" → "max_pages_per_rpc".

#include "core/types.h"
#include "models/tree_model.h"

#include <QHash>

namespace lutra::console {

struct SchemaEntry {
    QString fullName;     // "osc.ost0" for inner items, the parameter's name for leaves
    bool hasSpec = false; // a parameter (a leaf)
    ParamSpec spec;
};

class SchemaModel : public TreeModel<SchemaEntry> {
    Q_OBJECT
public:
    enum Column { Name, Type, Unit, Range, Default, Writable, Help, ColumnCount };
    Q_ENUM(Column)

    enum Roles {
        FullNameRole = Qt::UserRole + 1, // dotted name of the item
        WritableRole,                    // bool, leaves only
    };

    explicit SchemaModel(QObject *parent = nullptr);

    // Merges into the tree: new names are inserted in name order (natural: ost2 before ost10),
    // a changed spec is updated in place, nothing is removed.
    void setSchema(const QList<InstanceSpecs> &specs);

    const ParamSpec *spec(const QModelIndex &index) const; // nullptr unless a parameter
    QString fullName(const QModelIndex &index) const;
    // Every parameter name at or below index, in tree order (all of them for an invalid index).
    QStringList leafNamesUnder(const QModelIndex &index) const;
    QModelIndex indexOf(const QString &fullName) const; // column 0; invalid when unknown

    // "1 … 4096 pages", "on/off", "crc32c | adler", "any text", with " or clear" for specials.
    static QString rangeText(const ParamSpec &spec);
    static QString typeName(ParamType type);

    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    // Detached trees only (no signals).
    static void sortTree(Item *item);
    void mergeInto(Item *target, Item *source);
    void registerNames(Item *item);

    QHash<QString, Item *> m_byName;
};

} // namespace lutra::console
