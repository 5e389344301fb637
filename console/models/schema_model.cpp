#include "models/schema_model.h"

#include "models/format.h"

#include <limits>

namespace lutra::console {

namespace {

bool sameSpec(const ParamSpec &a, const ParamSpec &b)
{
    if (a.specialValues.size() != b.specialValues.size()) {
        return false;
    }
    for (qsizetype i = 0; i < a.specialValues.size(); ++i) {
        if (a.specialValues[i].word != b.specialValues[i].word ||
            a.specialValues[i].help != b.specialValues[i].help) {
            return false;
        }
    }
    return a.name == b.name && a.type == b.type && a.unit == b.unit && a.min == b.min &&
           a.max == b.max && a.defaultValue == b.defaultValue && a.writable == b.writable &&
           a.help == b.help && a.choices == b.choices && a.allowed == b.allowed &&
           a.textCommands == b.textCommands;
}

QString withUnit(const QString &text, const QString &unit)
{
    return unit.isEmpty() ? text : text + u' ' + unit;
}

} // namespace

SchemaModel::SchemaModel(QObject *parent) : TreeModel<SchemaEntry>(parent) {}

void SchemaModel::setSchema(const QList<InstanceSpecs> &specs)
{
    // The new names as a detached tree first, so each new subtree is announced with one insert.
    Item incoming;
    for (const InstanceSpecs &instance : specs) {
        for (const ParamSpec &spec : instance.specs) {
            if (spec.type == ParamType::counters || spec.name.isEmpty()) {
                continue;
            }
            Item *item = &incoming;
            QString prefix;
            for (const QString &component : spec.name.split(u'.')) {
                prefix = prefix.isEmpty() ? component : prefix + u'.' + component;
                Item *child = item->child(component);
                if (!child) {
                    auto created = std::make_unique<Item>();
                    created->parent = item;
                    created->key = component;
                    created->payload.fullName = prefix;
                    child = created.get();
                    item->children.push_back(std::move(created));
                }
                item = child;
            }
            // Several nodes report the same parameter: the last report wins.
            item->payload.hasSpec = true;
            item->payload.spec = spec;
        }
    }
    sortTree(&incoming);
    mergeInto(&m_root, &incoming);
}

void SchemaModel::sortTree(Item *item)
{
    std::stable_sort(item->children.begin(), item->children.end(),
                     [](const auto &a, const auto &b) { return naturalLess(a->key, b->key); });
    for (auto &child : item->children) {
        sortTree(child.get());
    }
}

void SchemaModel::mergeInto(Item *target, Item *source)
{
    QStringList wanted = target->childKeys();
    for (const auto &child : source->children) {
        if (!wanted.contains(child->key)) {
            wanted.append(child->key);
        }
    }
    std::stable_sort(wanted.begin(), wanted.end(), naturalLess);

    const QStringList existing = target->childKeys();
    syncChildren(target, wanted, [this, source](Item &item) {
        Item *from = source->child(item.key);
        item.payload = from->payload;
        item.children = std::move(from->children);
        for (auto &child : item.children) {
            child->parent = &item;
        }
        registerNames(&item);
    });

    for (const auto &sourceChild : source->children) {
        if (!existing.contains(sourceChild->key)) {
            continue;
        }
        Item *targetChild = target->child(sourceChild->key);
        SchemaEntry &entry = targetChild->payload;
        if (sourceChild->payload.hasSpec &&
            (!entry.hasSpec || !sameSpec(entry.spec, sourceChild->payload.spec))) {
            entry.hasSpec = true;
            entry.spec = sourceChild->payload.spec;
            emitChanged(targetChild, targetChild, 0, ColumnCount - 1);
        }
        mergeInto(targetChild, sourceChild.get());
    }
}

void SchemaModel::registerNames(Item *item)
{
    m_byName.insert(item->payload.fullName, item);
    for (auto &child : item->children) {
        registerNames(child.get());
    }
}

const ParamSpec *SchemaModel::spec(const QModelIndex &index) const
{
    if (!index.isValid() || index.model() != this) {
        return nullptr;
    }
    const Item *item = itemAt(index);
    return item->payload.hasSpec ? &item->payload.spec : nullptr;
}

QString SchemaModel::fullName(const QModelIndex &index) const
{
    if (!index.isValid() || index.model() != this) {
        return {};
    }
    return itemAt(index)->payload.fullName;
}

QStringList SchemaModel::leafNamesUnder(const QModelIndex &index) const
{
    if (index.isValid() && index.model() != this) {
        return {};
    }
    QStringList names;
    // Depth first, in row order: the order a tree view shows.
    std::vector<const Item *> stack{itemAt(index)};
    while (!stack.empty()) {
        const Item *item = stack.back();
        stack.pop_back();
        if (item->payload.hasSpec) {
            names.append(item->payload.spec.name);
        }
        for (auto it = item->children.crbegin(); it != item->children.crend(); ++it) {
            stack.push_back(it->get());
        }
    }
    return names;
}

QModelIndex SchemaModel::indexOf(const QString &fullName) const
{
    const Item *item = m_byName.value(fullName);
    return item ? TreeModel<SchemaEntry>::indexOf(item) : QModelIndex();
}

QString SchemaModel::typeName(ParamType type)
{
    switch (type) {
    case ParamType::integer: return QStringLiteral("integer");
    case ParamType::size: return QStringLiteral("size");
    case ParamType::boolean: return QStringLiteral("boolean");
    case ParamType::enumeration: return QStringLiteral("enum");
    case ParamType::duration: return QStringLiteral("duration");
    case ParamType::string: return QStringLiteral("string");
    case ParamType::counters: return QStringLiteral("counters");
    case ParamType::unspecified: break;
    }
    return {};
}

QString SchemaModel::rangeText(const ParamSpec &spec)
{
    QString text;
    switch (spec.type) {
    case ParamType::integer:
    case ParamType::size:
    case ParamType::duration:
        // The registry's "no upper bound" is the largest int64.
        if (spec.max == std::numeric_limits<qint64>::max()) {
            text = withUnit(QStringLiteral("≥ %1").arg(spec.min), spec.unit);
        } else {
            text = withUnit(QStringLiteral("%1 … %2").arg(spec.min).arg(spec.max), spec.unit);
        }
        break;
    case ParamType::boolean: text = QStringLiteral("on/off"); break;
    case ParamType::enumeration: text = spec.choices.join(QStringLiteral(" | ")); break;
    case ParamType::string: text = tr("any text"); break;
    case ParamType::counters:
    case ParamType::unspecified: break;
    }
    QStringList words;
    for (const SpecialValue &special : spec.specialValues) {
        words.append(special.word);
    }
    if (!words.isEmpty()) {
        const QString specials = words.join(QStringLiteral(" or "));
        text = text.isEmpty() ? specials : text + QStringLiteral(" or ") + specials;
    }
    return text;
}

int SchemaModel::columnCount(const QModelIndex &) const
{
    return ColumnCount;
}

QVariant SchemaModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid)) {
        return {};
    }
    const Item *item = itemAt(index);
    const SchemaEntry &entry = item->payload;
    const ParamSpec &spec = entry.spec;
    const int column = index.column();
    if (role == FullNameRole) {
        return entry.fullName;
    }
    if (role == WritableRole) {
        return entry.hasSpec ? QVariant(spec.writable) : QVariant();
    }
    if (role == Qt::DisplayRole) {
        if (column == Name) {
            return item->key;
        }
        if (!entry.hasSpec) {
            return {};
        }
        switch (Column(column)) {
        case Type: return typeName(spec.type);
        case Unit: return spec.unit;
        case Range: return rangeText(spec);
        case Default: return spec.defaultValue;
        case Writable: return spec.writable ? tr("yes") : tr("read-only");
        // The first line only; the whole text is the tooltip.
        case Help: return spec.help.section(u'\n', 0, 0);
        default: return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        if (column == Name) {
            return entry.fullName;
        }
        if (!entry.hasSpec) {
            return {};
        }
        if (column == Range) {
            QStringList lines;
            lines.append(rangeText(spec));
            if (!spec.allowed.isEmpty()) {
                lines.append(spec.allowed);
            }
            for (const SpecialValue &special : spec.specialValues) {
                lines.append(special.help.isEmpty()
                                 ? special.word
                                 : special.word + QStringLiteral(": ") + special.help);
            }
            return lines.join(u'\n');
        }
        if (column == Help && !spec.help.isEmpty()) {
            return spec.help;
        }
        if (column == Default && !spec.defaultValue.isEmpty()) {
            return spec.defaultValue;
        }
        return {};
    }
    return {};
}

QVariant SchemaModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (Column(section)) {
    case Name: return tr("Name");
    case Type: return tr("Type");
    case Unit: return tr("Unit");
    case Range: return tr("Range");
    case Default: return tr("Default");
    case Writable: return tr("Writable");
    case Help: return tr("Help");
    case ColumnCount: break;
    }
    return {};
}

} // namespace lutra::console
