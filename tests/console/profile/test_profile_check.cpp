// checkProfile: the console's check of a profile document gives the same errors, byte for byte,
// as lutra-ctld's own validation of an inline DiffProfile (ctld/daemon/profile_ops.cpp), which
// this test reproduces with ctld/profiles directly.

#include "core/param_check.h"
#include "core/params/spec.h"
#include "core/profile_check.h"
#include "ctld/profiles/parser.h"
#include "ctld/profiles/profile_set.h"
#include "ctld/profiles/schema_check.h"

#include <QTest>

#include <limits>
#include <string>
#include <vector>

using namespace lutra;
using namespace lutra::console;
namespace profiles = lutra::ctld::profiles;

namespace {

// One parameter of a client node, written once and turned into both the console's ParamSpec (what
// the net layer hands the console) and the registry's Spec (what ctld holds), independently of
// toRegistrySpec, so the comparison below is not circular.
struct Row {
    const char *name;
    ParamType consoleType;
    params::Type type;
    const char *unit;
    params::Unit registryUnit;
    qint64 min;
    qint64 max;
    bool writable;
    const char *special; // "" for none
    const char *specialHelp;
};

// A client node: one OST, one mount, one lock namespace (datapath/core/params/catalog.cpp).
const std::vector<Row> kClientNode = {
    {"osc.ost0.max_pages_per_rpc", ParamType::size, params::Type::size, "pages",
     params::Unit::pages, 1, 4096, true, "", ""},
    {"osc.ost0.max_rpcs_in_flight", ParamType::integer, params::Type::integer, "",
     params::Unit::none, 1, 512, true, "", ""},
    {"llite.lutra.max_read_ahead_mb", ParamType::size, params::Type::size, "MiB", params::Unit::mib,
     0, 1 << 20, true, "", ""},
    {"ldlm.namespaces.ost0.lru_size", ParamType::integer, params::Type::integer, "",
     params::Unit::none, 0, 1 << 24, true, "clear", "cancel every unused lock now"},
    {"ldlm.namespaces.ost0.lock_count", ParamType::integer, params::Type::integer, "",
     params::Unit::none, 0, std::numeric_limits<qint64>::max(), false, "", ""},
    {"llite.lutra.read_ahead_stats", ParamType::counters, params::Type::counters, "",
     params::Unit::none, 0, 0, true, "clear", "reset every counter of the block"},
};

// A second target's client, for globs matching more than one instance's parameter.
const std::vector<Row> kSecondTarget = {
    {"osc.ost1.max_pages_per_rpc", ParamType::size, params::Type::size, "pages",
     params::Unit::pages, 1, 4096, true, "", ""},
};

ParamSpec consoleSpec(const Row &row)
{
    ParamSpec spec;
    spec.name = QString::fromLatin1(row.name);
    spec.type = row.consoleType;
    spec.unit = QString::fromLatin1(row.unit);
    spec.min = row.min;
    spec.max = row.max;
    spec.writable = row.writable;
    if (*row.special != '\0') {
        spec.specialValues = {
            {QString::fromLatin1(row.special), QString::fromLatin1(row.specialHelp)}};
    }
    return spec;
}

params::Spec registrySpec(const Row &row)
{
    params::Spec spec;
    spec.name = row.name;
    spec.type = row.type;
    spec.unit = row.registryUnit;
    spec.min = row.min;
    spec.max = row.max;
    spec.writable = row.writable;
    if (*row.special != '\0') {
        spec.specialValues = {{row.special, row.specialHelp}};
    }
    return spec;
}

InstanceSpecs instance(const QString &id, const std::vector<Row> &rows)
{
    InstanceSpecs specs;
    specs.instance = id;
    for (const Row &row : rows) {
        specs.specs.append(consoleSpec(row));
    }
    return specs;
}

QList<InstanceSpecs> consoleSchema()
{
    return {instance(QStringLiteral("client-lutra"), kClientNode),
            instance(QStringLiteral("client-lutra2"), kSecondTarget)};
}

// ctld's nodeSchema over the same two instances.
std::vector<params::Spec> ctldSchema()
{
    std::vector<params::Spec> schema;
    for (const auto *rows : {&kClientNode, &kSecondTarget}) {
        for (const Row &row : *rows) {
            schema.push_back(registrySpec(row));
        }
    }
    return schema;
}

const QStringList kKnown = {QStringLiteral("base"), QStringLiteral("site")};

// What lutra-ctld answers DiffProfile{yaml} with, following ProfileOps::run: parse the inline
// document, put it in the set with the stored profiles, resolve, and validate the effective
// parameters against the schema only when that worked.
profiles::Diagnostics ctldErrors(const QString &yaml, const std::string &source = "inline")
{
    auto parsed = profiles::parseProfile(yaml.toStdString(), source);
    if (!parsed.ok()) {
        return parsed.errors;
    }
    const std::string name = parsed.profile.name;
    profiles::ProfileSet set;
    [&] { QVERIFY(set.add(std::move(parsed.profile)).empty()); }();
    for (const QString &known : kKnown) {
        const std::string text = "name: " + known.toStdString() + "\n";
        [&] { QVERIFY(set.addText(text, "profile:" + known.toStdString()).empty()); }();
    }
    auto resolved = set.resolve(name);
    auto errors = resolved.errors;
    if (resolved.ok()) {
        const auto schema = ctldSchema();
        auto invalid = profiles::validateParams(resolved.params, schema);
        errors.insert(errors.end(), invalid.begin(), invalid.end());
    }
    return errors;
}

QStringList texts(const QList<ProfileError> &errors)
{
    QStringList list;
    for (const ProfileError &error : errors) {
        list.append(profileErrorText(error));
    }
    return list;
}

QStringList texts(const profiles::Diagnostics &diagnostics)
{
    QStringList list;
    for (const auto &diagnostic : diagnostics) {
        list.append(QString::fromStdString(diagnostic.toString()));
    }
    return list;
}

const QString kCompute = QStringLiteral("name: compute\n"
                                        "description: compute nodes, streaming reads\n"
                                        "extends: base\n"
                                        "params:\n"
                                        "  osc.ost0.max_pages_per_rpc: 16M\n"
                                        "  osc.ost0.max_rpcs_in_flight: 32\n"
                                        "  llite.lutra.max_read_ahead_mb: 256\n"
                                        "  ldlm.namespaces.ost0.lru_size: 0\n");

// kCompute with one line replaced (1-based).
QString computeWith(int line, const QString &text)
{
    QStringList lines = kCompute.split(QLatin1Char('\n'));
    lines[line - 1] = text;
    return lines.join(QLatin1Char('\n'));
}

} // namespace

class TestProfileCheck : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void validCompute()
    {
        const ProfileCheck check =
            checkProfile(kCompute, QStringLiteral("compute.yaml"), consoleSchema(), kKnown);
        QCOMPARE(texts(check.errors), QStringList());
        QCOMPARE(check.name, QStringLiteral("compute"));
        QVERIFY(check.errorLines.isEmpty());
        QVERIFY(ctldErrors(kCompute).empty());
    }

    void badValue()
    {
        const QString yaml = computeWith(5, QStringLiteral("  osc.ost0.max_pages_per_rpc: 99999"));
        const ProfileCheck check =
            checkProfile(yaml, QStringLiteral("inline"), consoleSchema(), kKnown);
        QCOMPARE(check.errors.size(), 1);
        const ProfileError &error = check.errors.first();
        QCOMPARE(error.file, QStringLiteral("inline"));
        QCOMPARE(error.line, 5);
        QCOMPARE(error.column, 31); // the value, not the key
        QVERIFY2(error.message.startsWith(
                     QStringLiteral("osc.ost0.max_pages_per_rpc=99999: out of range")),
                 qPrintable(error.message));
        QCOMPARE(check.errorLines, QList<int>{5});
        // Byte for byte what ctld says.
        const auto expected = ctldErrors(yaml);
        QCOMPARE(texts(check.errors), texts(expected));
        QCOMPARE(error.message.toStdString(), expected.front().message);
    }

    void misspelledParameter()
    {
        const QString yaml = computeWith(5, QStringLiteral("  osc.*.max_page_per_rpc: 16M"));
        const ProfileCheck check =
            checkProfile(yaml, QStringLiteral("inline"), consoleSchema(), kKnown);
        QCOMPARE(check.errors.size(), 1);
        const ProfileError &error = check.errors.first();
        QCOMPARE(error.line, 5);
        QCOMPARE(error.column, 3); // the pattern
        QCOMPARE(error.message, QStringLiteral("unknown parameter 'osc.*.max_page_per_rpc' (no "
                                               "parameter matches; did you mean "
                                               "osc.*.max_pages_per_rpc?)"));
        QCOMPARE(texts(check.errors), texts(ctldErrors(yaml)));
    }

    void actionRefused()
    {
        const QString yaml =
            computeWith(8, QStringLiteral("  ldlm.namespaces.ost0.lru_size: clear"));
        const ProfileCheck check =
            checkProfile(yaml, QStringLiteral("inline"), consoleSchema(), kKnown);
        QCOMPARE(check.errors.size(), 1);
        QCOMPARE(check.errors.first().line, 8);
        QCOMPARE(check.errors.first().column, 34);
        QCOMPARE(check.errors.first().message,
                 QStringLiteral("ldlm.namespaces.ost0.lru_size=clear: an action, not a value "
                                "(cancel every unused lock now); a profile describes a desired "
                                "state, so run actions with lutractl set_param"));
        QCOMPARE(texts(check.errors), texts(ctldErrors(yaml)));
    }

    void unknownParent()
    {
        const QString yaml = computeWith(3, QStringLiteral("extends: [site, basee]"));
        const ProfileCheck check =
            checkProfile(yaml, QStringLiteral("inline"), consoleSchema(), kKnown);
        QCOMPARE(check.errors.size(), 1);
        QCOMPARE(check.errors.first().line, 3);
        QCOMPARE(check.errors.first().column, 17); // at "basee", not at "extends"
        QCOMPARE(check.errors.first().message,
                 QStringLiteral("unknown profile 'basee' in extends (did you mean base?)"));
        QCOMPARE(texts(check.errors), texts(ctldErrors(yaml)));
    }

    void unknownParentHidesParameters()
    {
        // ctld validates parameters only once `extends` resolves; so does the console.
        QString yaml = computeWith(3, QStringLiteral("extends: nothing-like-it"));
        yaml = yaml.replace(QStringLiteral(": 16M"), QStringLiteral(": 99999"));
        const ProfileCheck check =
            checkProfile(yaml, QStringLiteral("inline"), consoleSchema(), kKnown);
        QCOMPARE(texts(check.errors),
                 QStringList{QStringLiteral("inline:3:10: unknown profile 'nothing-like-it' in "
                                            "extends")});
        QCOMPARE(texts(check.errors), texts(ctldErrors(yaml)));
    }

    void extendsItself()
    {
        const QString yaml = computeWith(3, QStringLiteral("extends: compute"));
        const ProfileCheck check =
            checkProfile(yaml, QStringLiteral("inline"), consoleSchema(), kKnown);
        QCOMPARE(texts(check.errors),
                 QStringList{QStringLiteral("inline:3:10: cycle in extends: compute -> compute")});
        QCOMPARE(texts(check.errors), texts(ctldErrors(yaml)));
    }

    void ownNameAmongKnown()
    {
        // Editing a stored profile: the document replaces its namesake, as in ctld.
        const ProfileCheck check = checkProfile(kCompute, QStringLiteral("inline"), consoleSchema(),
                                                kKnown + QStringList{QStringLiteral("compute")});
        QCOMPARE(texts(check.errors), QStringList());
    }

    void syntaxError()
    {
        const QString yaml = QStringLiteral("name: compute\n"
                                            "params:\n"
                                            "  osc.ost0.max_pages_per_rpc: [16M\n"
                                            "  osc.ost0.max_rpcs_in_flight: 32\n");
        const ProfileCheck check =
            checkProfile(yaml, QStringLiteral("inline"), consoleSchema(), kKnown);
        QCOMPARE(check.errors.size(), 1);
        QVERIFY2(check.errors.first().message.startsWith(QStringLiteral("YAML syntax error: ")),
                 qPrintable(check.errors.first().message));
        QVERIFY(check.errors.first().line >= 3);
        QCOMPARE(check.errorLines, QList<int>{check.errors.first().line});
        QCOMPARE(texts(check.errors), texts(ctldErrors(yaml)));
    }

    void structuralErrorsOnly()
    {
        // Structure is wrong: parameters are not looked at, whatever the schema.
        const QString yaml = QStringLiteral("name: compute\n"
                                            "descrption: typo\n"
                                            "params:\n"
                                            "  osc.ost0.max_pages_per_rpc: 99999\n");
        const ProfileCheck check =
            checkProfile(yaml, QStringLiteral("t.yaml"), consoleSchema(), kKnown);
        QCOMPARE(texts(check.errors),
                 QStringList{QStringLiteral("t.yaml:2:1: unknown key 'descrption' (expected name, "
                                            "description, extends, match or params; did you mean "
                                            "description?)")});
        QCOMPARE(check.name, QStringLiteral("compute"));
        QCOMPARE(texts(check.errors), texts(ctldErrors(yaml, "t.yaml")));
    }

    void emptySchema()
    {
        // No node connected: bad values and unknown parameters cannot be known yet.
        QString yaml = computeWith(5, QStringLiteral("  osc.*.max_page_per_rpc: 99999"));
        yaml += QStringLiteral("  llite.lutra.read_ahead_stats: clear\n");
        ProfileCheck check = checkProfile(yaml, QStringLiteral("inline"), {}, kKnown);
        QCOMPARE(texts(check.errors), QStringList());
        QCOMPARE(check.name, QStringLiteral("compute"));

        // An instance with no parameters is no schema either.
        check = checkProfile(yaml, QStringLiteral("inline"),
                             {InstanceSpecs{QStringLiteral("client-lutra"), {}}}, kKnown);
        QCOMPARE(texts(check.errors), QStringList());

        // Structure and parents are still checked, and nothing is said about parameters.
        yaml = computeWith(3, QStringLiteral("extends: basee")) +
               QStringLiteral("  osc.ost0.max_rpcs_in_flight: 8\n");
        check = checkProfile(yaml, QStringLiteral("inline"), {}, kKnown);
        QCOMPARE(texts(check.errors),
                 QStringList{QStringLiteral("inline:9:3: duplicate parameter "
                                            "'osc.ost0.max_rpcs_in_flight' (first at line 6)")});
        yaml = computeWith(3, QStringLiteral("extends: basee"));
        check = checkProfile(yaml, QStringLiteral("inline"), {}, kKnown);
        QCOMPARE(texts(check.errors),
                 QStringList{QStringLiteral(
                     "inline:3:10: unknown profile 'basee' in extends (did you mean base?)")});
        for (const ProfileError &error : std::as_const(check.errors)) {
            QVERIFY(!error.message.contains(QStringLiteral("parameter")));
        }
    }

    void sameAsCtld_data()
    {
        QTest::addColumn<QString>("yaml");
        QTest::newRow("every problem at once")
            << QStringLiteral("name: compute\n"
                              "params:\n"
                              "  osc.*.max_pages_per_rpc: 99999\n"
                              "  osc.ost0.max_rpcs_in_flight: lots\n"
                              "  osc.*.max_pages_per_rpcs: 16M\n"
                              "  ldlm.namespaces.*.lock_count: 5\n"
                              "  llite.lutra.read_ahead_stats: clear\n"
                              "  ldlm.namespaces.ost0.lru_size: clear\n"
                              "  llite.*.max_read_ahead_mb: 1.5\n"
                              "  llite.lutra.max_read_ahead_mb: 2T\n"
                              "  osc.[.max_pages_per_rpc: 1\n");
        QTest::newRow("wrong prefix, right leaf")
            << QStringLiteral("name: c\nparams:\n  osc.*.max_read_ahead_mb: 64\n");
        QTest::newRow("nothing close") << QStringLiteral("name: c\nparams:\n  zzz.qqq: 1\n");
        QTest::newRow("flow mapping")
            << QStringLiteral("name: c\nparams: {osc.ost0.max_rpcs_in_flight: 0, "
                              "osc.ost1.max_pages_per_rpc: 8M}\n");
        QTest::newRow("missing name") << QStringLiteral("params:\n  osc.ost0.checksums: on\n");
        QTest::newRow("empty") << QString();
        QTest::newRow("list value")
            << QStringLiteral("name: c\nparams:\n  osc.ost0.max_rpcs_in_flight: [1, 2]\n");
        QTest::newRow("two documents") << QStringLiteral("name: a\n---\nname: b\n");
    }

    void sameAsCtld()
    {
        QFETCH(QString, yaml);
        const ProfileCheck check =
            checkProfile(yaml, QStringLiteral("inline"), consoleSchema(), kKnown);
        const auto expected = ctldErrors(yaml);
        QCOMPARE(texts(check.errors), texts(expected));
        QCOMPARE(check.errors.size(), qsizetype(expected.size()));
        for (qsizetype i = 0; i < check.errors.size(); ++i) {
            const auto &want = expected[static_cast<std::size_t>(i)];
            QCOMPARE(check.errors[i].line, want.location.line);
            QCOMPARE(check.errors[i].column, want.location.column);
            QCOMPARE(check.errors[i].message.toStdString(), want.message);
        }
    }

    void toRegistrySpecKeepsTheSpec()
    {
        const params::Spec lru = toRegistrySpec(consoleSpec(kClientNode[3]));
        QCOMPARE(lru.name, std::string("ldlm.namespaces.ost0.lru_size"));
        QCOMPARE(lru.type, params::Type::integer);
        QCOMPARE(lru.max, qint64(1 << 24));
        QCOMPARE(lru.specialValues.size(), std::size_t(1));
        QCOMPARE(lru.specialValues.front().word, std::string("clear"));
        const params::Spec pages = toRegistrySpec(consoleSpec(kClientNode[0]));
        QCOMPARE(pages.unit, params::Unit::pages);
        QCOMPARE(pages.type, params::Type::size);

        // A type the console does not know: the node judges the value, checkValue still refuses.
        ParamSpec unknown = consoleSpec(kClientNode[1]);
        unknown.type = ParamType::unspecified;
        QCOMPARE(toRegistrySpec(unknown).type, params::Type::string);
        const ValueCheck value = checkValue(unknown, QStringLiteral("8"));
        QVERIFY(!value.ok);
        QCOMPARE(value.error,
                 QStringLiteral("osc.ost0.max_rpcs_in_flight: unknown parameter type"));
    }
};

QTEST_GUILESS_MAIN(TestProfileCheck)
#include "test_profile_check.moc"
