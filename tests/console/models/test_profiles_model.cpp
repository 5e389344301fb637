#include "model_print.h"
#include "models/format.h"
#include "models/load_errors_model.h"
#include "models/profiles_model.h"

#include <QAbstractItemModelTester>
#include <QBrush>
#include <QSignalSpy>
#include <QTest>

using namespace lutra::console;
using lutra::console::test::printModel;

namespace {

const QString computeFile = QStringLiteral("/etc/lutra/profiles/compute.yaml");
const QString baseFile = QStringLiteral("/etc/lutra/profiles/base.yaml");

ProfileSummary profile(const QString &name, const QString &source, bool matches,
                       const QStringList &extends = {}, const QString &description = {})
{
    ProfileSummary summary;
    summary.name = name;
    summary.description = description;
    summary.extends = extends;
    summary.matchesNode = matches;
    summary.source = source;
    return summary;
}

ProfileError loadError(const QString &file, int line, int column, const QString &message)
{
    ProfileError error;
    error.file = file;
    error.line = line;
    error.column = column;
    error.message = message;
    return error;
}

ProfileList node001()
{
    ProfileList list;
    list.profiles = {
        profile(QStringLiteral("io-heavy"), QStringLiteral("stored"), false,
                {QStringLiteral("base"), QStringLiteral("site")},
                QStringLiteral("Large sequential I/O")),
        profile(QStringLiteral("compute"), computeFile, true, {QStringLiteral("base")},
                QStringLiteral("Compute nodes")),
        profile(QStringLiteral("base"), QStringLiteral("stored"), true, {},
                QStringLiteral("Site defaults")),
    };
    list.errors = {loadError(QStringLiteral("/etc/lutra/profiles/bad.yaml"), 3, 5,
                             QStringLiteral("unknown key 'paramz'"))};
    return list;
}

ProfileList node002()
{
    ProfileList list;
    list.profiles = {
        profile(QStringLiteral("compute"), computeFile, true, {QStringLiteral("base")},
                QStringLiteral("Compute nodes")),
        profile(QStringLiteral("base"), baseFile, true, {}, QStringLiteral("Site defaults")),
    };
    return list;
}

ProfileList node010()
{
    ProfileList list;
    list.profiles = {
        profile(QStringLiteral("tier10"), QStringLiteral("stored"), true),
        profile(QStringLiteral("compute"), computeFile, false, {QStringLiteral("base")},
                QStringLiteral("Compute nodes")),
        profile(QStringLiteral("tier2"), QStringLiteral("stored"), true),
    };
    list.errors = {loadError(QStringLiteral("/etc/lutra/profiles/x.yaml"), 0, 0,
                             QStringLiteral("cannot read: permission denied"))};
    return list;
}

} // namespace

class TestProfilesModel : public QObject {
    Q_OBJECT
private slots:
    void mergesNodes()
    {
        ProfilesModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        LoadErrorsModel errors;
        QAbstractItemModelTester errorsTester(
            &errors, QAbstractItemModelTester::FailureReportingMode::QtTest);
        connect(&model, &ProfilesModel::loadErrorsChanged, &errors,
                [&] { errors.setErrors(model.loadErrors()); });
        QSignalSpy errorsChanged(&model, &ProfilesModel::loadErrorsChanged);

        model.setNodeProfiles(QStringLiteral("node010"), node010());
        model.setNodeProfiles(QStringLiteral("node002"), node002());
        model.setNodeProfiles(QStringLiteral("node001"), node001());
        QCOMPARE(
            printModel(model),
            QStringList({"base | Site defaults |  | differs | 2 of 2 nodes | node010",
                         "compute | Compute nodes | base | " + computeFile + " | 2 of 3 nodes | —",
                         "io-heavy | Large sequential I/O | base, site | stored | 0 of 1 node "
                         "| node002, node010",
                         "tier2 |  |  | stored | 1 of 1 node | node001, node002",
                         "tier10 |  |  | stored | 1 of 1 node | node001, node002"}));
        QCOMPARE(model.nodes(), QStringList({"node001", "node002", "node010"}));
        QCOMPARE(model.nodesMatching(QStringLiteral("compute")),
                 QStringList({"node001", "node002"}));
        QCOMPARE(model.nodesKnowing(QStringLiteral("compute")),
                 QStringList({"node001", "node002", "node010"}));
        QCOMPARE(model.nodesKnowing(QStringLiteral("nope")), QStringList());

        // Only the disagreeing source is amber; its tooltip says who has which.
        const QModelIndex baseSource = model.index(0, ProfilesModel::Source);
        QCOMPARE(baseSource.data(Qt::BackgroundRole).value<QBrush>().color(), warningColor());
        QCOMPARE(baseSource.data(Qt::ToolTipRole).toString(),
                 "node001: stored\nnode002: " + baseFile);
        QVERIFY(baseSource.data(ProfilesModel::DiffersRole).toBool());
        QVERIFY(!model.index(1, ProfilesModel::Source).data(Qt::BackgroundRole).isValid());
        QCOMPARE(model.index(1, ProfilesModel::Matches).data(ProfilesModel::SortRole).toInt(), 2);
        QCOMPARE(model.index(2, ProfilesModel::Missing).data(ProfilesModel::SortRole).toInt(), 2);
        QCOMPARE(model.index(3, ProfilesModel::Name).data(ProfilesModel::ProfileRole).toString(),
                 QStringLiteral("tier2"));

        // Errors per node in natural node order; one without a line has no place in its file.
        QCOMPARE(errorsChanged.size(), 2);
        QCOMPARE(printModel(errors),
                 QStringList({"node001 | /etc/lutra/profiles/bad.yaml:3:5 | unknown key 'paramz'",
                              "node010 | /etc/lutra/profiles/x.yaml | cannot read: permission "
                              "denied"}));
        QCOMPARE(errors.index(0, LoadErrorsModel::Message)
                     .data(Qt::ForegroundRole)
                     .value<QBrush>()
                     .color(),
                 errorColor());
        QCOMPARE(model.loadErrors().size(), 2);
        QCOMPARE(model.loadErrors()[1].first, QStringLiteral("node010"));

        // The periodic refresh repeats what is known: nothing is signalled.
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        model.setNodeProfiles(QStringLiteral("node002"), node002());
        model.setNodeProfiles(QStringLiteral("node001"), node001());
        QCOMPARE(changed.size() + inserted.size() + removed.size() + reset.size(), 0);
        QCOMPARE(errorsChanged.size(), 2);

        // node002 now ships base from the same place as node001: base agrees, in place.
        ProfileList agreeing = node002();
        agreeing.profiles[1].source = QStringLiteral("stored");
        model.setNodeProfiles(QStringLiteral("node002"), agreeing);
        QCOMPARE(changed.size(), 1);
        QCOMPARE(changed[0][0].toModelIndex(), model.index(0, 0));
        QCOMPARE(changed[0][1].toModelIndex(), model.index(0, ProfilesModel::ColumnCount - 1));
        QCOMPARE(model.index(0, ProfilesModel::Source).data().toString(), QStringLiteral("stored"));
        QVERIFY(!model.index(0, ProfilesModel::Source).data(Qt::BackgroundRole).isValid());

        // node010 leaves: its own profiles go, the others' Missing and Matches shrink.
        changed.clear();
        model.removeNode(QStringLiteral("node010"));
        QCOMPARE(removed.size(), 1);
        QCOMPARE(reset.size() + inserted.size(), 0);
        QCOMPARE(changed.size(), 1); // base, compute and io-heavy: one run
        QCOMPARE(printModel(model,
                            {ProfilesModel::Name, ProfilesModel::Matches, ProfilesModel::Missing}),
                 QStringList({"base | 2 of 2 nodes | —", "compute | 2 of 2 nodes | —",
                              "io-heavy | 0 of 1 node | node002"}));
        QCOMPARE(errorsChanged.size(), 3);
        QCOMPARE(printModel(errors, {LoadErrorsModel::Node}), QStringList({"node001"}));

        model.removeNode(QStringLiteral("node404"));
        QCOMPARE(errorsChanged.size(), 3);
    }

    void namesListedTwiceCountOnce()
    {
        ProfilesModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        ProfileList list;
        list.profiles = {profile(QStringLiteral("base"), QStringLiteral("stored"), true),
                         profile(QStringLiteral("base"), QStringLiteral("stored"), true)};
        model.setNodeProfiles(QStringLiteral("node1"), list);
        QCOMPARE(printModel(model), QStringList({"base |  |  | stored | 1 of 1 node | —"}));
    }
};

QTEST_GUILESS_MAIN(TestProfilesModel)
#include "test_profiles_model.moc"
