// Profiles against a node's schema: unknown parameters (with a suggestion), bad values and
// ranges in the registry's own words, read-only parameters, actions refused; the diff against
// live values compares canonical forms; the example profiles in config/profiles validate.
#include "ctld/profiles/parser.h"
#include "ctld/profiles/profile_set.h"
#include "ctld/profiles/schema_check.h"
#include "schema_fixture.h"

#include <QStringList>
#include <QTest>

using namespace lutra;
using namespace lutra::ctld::profiles;

namespace {

QStringList texts(const Diagnostics &diagnostics)
{
    QStringList list;
    for (const auto &diagnostic : diagnostics) {
        list << QString::fromStdString(diagnostic.toString());
    }
    return list;
}

Profile parsed(const std::string &params)
{
    auto result = parseProfile("name: p\nparams:\n" + params, "p.yaml");
    if (!result.ok()) {
        qFatal("%s", toStatus(result.errors).message().c_str());
    }
    return std::move(result.profile);
}

QStringList validate(const std::string &params)
{
    return texts(validateParams(parsed(params).params, nodeSchema()));
}

// "name: live -> desired [changed]" per plan entry.
QStringList planText(const Plan &plan)
{
    QStringList list;
    for (const auto &entry : plan.entries) {
        list << QString::fromStdString(entry.name + ": " +
                                       (entry.liveKnown ? entry.live : std::string("?")) + " -> " +
                                       entry.desired + (entry.changed ? " [changed]" : ""));
    }
    return list;
}

// What the catalogue's defaults read back as, for every writable parameter of the schema.
LiveValues defaults()
{
    LiveValues live;
    for (const auto &spec : nodeSchema()) {
        if (spec.type != params::Type::counters) {
            live[spec.name] = params::formatValue(spec, spec.defaultValue);
        }
    }
    return live;
}

} // namespace

class TestProfileSchema : public QObject {
    Q_OBJECT

private slots:
    void validProfileHasNoErrors()
    {
        QCOMPARE(validate("  osc.*.max_pages_per_rpc: 16M\n"
                          "  osc.ost1.max_rpcs_in_flight: 16\n"
                          "  llite.*.fast_read: off\n"
                          "  ldlm.namespaces.*.lru_max_age: 65s\n"
                          "  osc.{ost0,ost1}.checksum_type: crc32c\n"
                          "  jobid_var: SLURM_JOB_ID\n"),
                 QStringList{});
    }

    void unknownParameterSuggestsTheClosestInThePatternsShape()
    {
        QCOMPARE(validate("  osc.*.max_pages_per_rpcs: 16M\n"),
                 QStringList{"p.yaml:3:3: unknown parameter 'osc.*.max_pages_per_rpcs' (no "
                             "parameter matches; did you mean osc.*.max_pages_per_rpc?)"});
        QCOMPARE(validate("  osc.ost0.max_page_per_rpc: 16M\n"),
                 QStringList{"p.yaml:3:3: unknown parameter 'osc.ost0.max_page_per_rpc' (no "
                             "parameter matches; did you mean osc.ost0.max_pages_per_rpc?)"});
        // The right leaf under the wrong prefix.
        QCOMPARE(validate("  osc.*.max_read_ahead_mb: 64\n"),
                 QStringList{"p.yaml:3:3: unknown parameter 'osc.*.max_read_ahead_mb' (no "
                             "parameter matches; did you mean llite.*.max_read_ahead_mb?)"});
        QCOMPARE(validate("  osc.ost9.max_dirty_mb: 64\n"),
                 QStringList{"p.yaml:3:3: unknown parameter 'osc.ost9.max_dirty_mb' (no "
                             "parameter matches; did you mean osc.ost0.max_dirty_mb?)"});
        QCOMPARE(validate("  something.else: 1\n"),
                 QStringList{"p.yaml:3:3: unknown parameter 'something.else' (no parameter "
                             "matches)"});
        const auto errors = validateParams(parsed("  x: 1\n").params, nodeSchema());
        QCOMPARE(errors.front().code, Errc::not_found);
    }

    void badValuesUseTheRegistrysMessagesAtTheValue()
    {
        QCOMPARE(validate("  osc.*.max_pages_per_rpc: 5000\n"
                          "  osc.*.max_dirty_mb: 512K\n"
                          "  llite.*.fast_read: maybe\n"
                          "  osc.ost0.max_rpcs_in_flight: 16M\n"
                          "  osc.*.checksum_type: md5\n"),
                 (QStringList{
                     "p.yaml:3:28: osc.ost0.max_pages_per_rpc=5000: out of range; allowed: "
                     "1..4096 pages, or a size with a K/M/G/T/P suffix (16M = 4096 pages)",
                     "p.yaml:4:23: osc.ost0.max_dirty_mb=512K: not a whole number of MiB; "
                     "allowed: 1..65536 MiB, or a size with a K/M/G/T/P suffix (converted to MiB)",
                     "p.yaml:5:22: llite.lutra.fast_read=maybe: not a boolean; allowed: 0 or 1 "
                     "(also on/off, yes/no, true/false)",
                     "p.yaml:6:32: osc.ost0.max_rpcs_in_flight=16M: an integer takes no unit "
                     "suffix; allowed: an integer, 1..256",
                     "p.yaml:7:24: osc.ost0.checksum_type=md5: not a known choice; allowed: one "
                     "of crc32c",
                 }));
        const auto errors =
            validateParams(parsed("  osc.*.max_pages_per_rpc: 5000\n").params, nodeSchema());
        QCOMPARE(errors.front().code, Errc::out_of_range);
    }

    void readOnlyParametersAreRefused()
    {
        QCOMPARE(validate("  ldlm.namespaces.ost0.lock_count: 5\n"
                          "  ldlm.namespaces.*.lock_unused_count: 0\n"),
                 (QStringList{"p.yaml:3:3: parameter ldlm.namespaces.ost0.lock_count is read-only",
                              "p.yaml:4:3: 'ldlm.namespaces.*.lock_unused_count' matches "
                              "read-only parameter ldlm.namespaces.ost0.lock_unused_count (and 1 "
                              "more)"}));
    }

    void actionsAreNotStates()
    {
        QCOMPARE(validate("  ldlm.namespaces.*.lru_size: clear\n"
                          "  llite.lutra.read_ahead_stats: clear\n"),
                 (QStringList{
                     "p.yaml:3:31: ldlm.namespaces.ost0.lru_size=clear: an action, not a value "
                     "(cancel every unused lock now); a profile describes a desired state, so "
                     "run actions with lutractl set_param",
                     "p.yaml:4:33: llite.lutra.read_ahead_stats=clear: an action, not a value "
                     "(reset every counter of the block); a profile describes a desired state, "
                     "so run actions with lutractl set_param",
                 }));
        QCOMPARE(validate("  llite.lutra.read_ahead_stats: 5\n"),
                 QStringList{"p.yaml:3:33: llite.lutra.read_ahead_stats=5: a counter block cannot "
                             "be set; allowed: nothing but its special values; or 'clear' (reset "
                             "every counter of the block)"});
    }

    void badGlobsAreReportedAtThePattern()
    {
        QCOMPARE(validate("  \"osc.{ost0.max_dirty_mb\": 5\n"),
                 QStringList{"p.yaml:3:3: bad pattern 'osc.{ost0.max_dirty_mb' at column 5: '{' "
                             "is never closed"});
    }

    void everyErrorOfEveryEntryIsReported()
    {
        const QStringList errors = validate("  osc.*.max_pages_per_rpcs: 16M\n"
                                            "  osc.*.max_rpcs_in_flight: 0\n"
                                            "  llite.*.max_cached_mb: 1\n"
                                            "  jobid_var: x\n"
                                            "  ldlm.namespaces.*.lru_size: clear\n");
        QCOMPARE(errors.size(), 3);
        QVERIFY(errors[0].startsWith("p.yaml:3:3: unknown parameter"));
        QVERIFY(errors[1].startsWith("p.yaml:4:29: osc.ost0.max_rpcs_in_flight=0: out of range"));
        QVERIFY(errors[2].startsWith("p.yaml:7:31: ldlm.namespaces.ost0.lru_size=clear"));
    }

    void diffComparesCanonicalForms()
    {
        LiveValues live = defaults();
        live["osc.ost1.max_pages_per_rpc"] = "4096";
        live["llite.lutra.fast_read"] = "1";
        const Profile profile = parsed("  osc.*.max_pages_per_rpc: 16M\n"
                                       "  llite.*.fast_read: on\n"
                                       "  osc.*.max_rpcs_in_flight: 8\n"
                                       "  osc.ost1.max_rpcs_in_flight: 32\n"
                                       "  ldlm.namespaces.ost0.lru_max_age: 1h\n");
        // 1h is not a duration lutra knows: the plan refuses, with the error.
        Plan plan = diff(profile.params, nodeSchema(), live);
        QVERIFY(!plan.ok());
        QVERIFY(plan.entries.empty());
        QCOMPARE(texts(plan.errors),
                 QStringList{"p.yaml:7:37: ldlm.namespaces.ost0.lru_max_age=1h: unknown unit "
                             "suffix 'h'; allowed: 1..604800 s, or a duration with an s or ms "
                             "suffix"});

        const Profile fixed = parsed("  osc.*.max_pages_per_rpc: 16M\n"
                                     "  llite.*.fast_read: on\n"
                                     "  osc.*.max_rpcs_in_flight: 8\n"
                                     "  osc.ost1.max_rpcs_in_flight: 32\n"
                                     "  ldlm.namespaces.ost0.lru_max_age: 3900000ms\n");
        plan = diff(fixed.params, nodeSchema(), live);
        QVERIFY(plan.ok());
        QCOMPARE(planText(plan), (QStringList{
                                     "ldlm.namespaces.ost0.lru_max_age: 3900 -> 3900",
                                     "llite.lutra.fast_read: 1 -> 1",
                                     "osc.ost0.max_pages_per_rpc: 1024 -> 4096 [changed]",
                                     "osc.ost0.max_rpcs_in_flight: 8 -> 8",
                                     "osc.ost1.max_pages_per_rpc: 4096 -> 4096",
                                     "osc.ost1.max_rpcs_in_flight: 8 -> 32 [changed]",
                                 }));
        QCOMPARE(plan.changedCount(), 2u);
        const auto batch = plan.changes();
        QCOMPARE(batch.size(), 2u);
        QCOMPARE(batch[0].pattern, "osc.ost0.max_pages_per_rpc");
        QCOMPARE(batch[0].value, "4096");
        QCOMPARE(batch[1].pattern, "osc.ost1.max_rpcs_in_flight");
        QCOMPARE(batch[1].value, "32");
        // Each entry says which line decided it.
        QCOMPARE(plan.entries[5].pattern, "osc.ost1.max_rpcs_in_flight");
        QCOMPARE(QString::fromStdString(plan.entries[5].source.toString()), "p.yaml:6:3");
        QCOMPARE(plan.entries[3].pattern, "osc.*.max_rpcs_in_flight");
    }

    void liveValuesInAnotherSpellingAreNoChange()
    {
        // A live value that is not canonical text (an older process, a hand-written fixture)
        // still compares by meaning.
        const LiveValues live{{"osc.ost0.max_dirty_mb", "1G"}, {"osc.ost0.checksums", "on"}};
        const Profile profile = parsed("  osc.ost0.max_dirty_mb: 1024\n  osc.ost0.checksums: yes\n"
                                       "  osc.ost1.checksums: 0\n");
        const Plan plan = diff(profile.params, nodeSchema(), live);
        QCOMPARE(planText(plan), (QStringList{
                                     "osc.ost0.checksums: 1 -> 1",
                                     "osc.ost0.max_dirty_mb: 1024 -> 1024",
                                     "osc.ost1.checksums: ? -> 0 [changed]",
                                 }));
        QVERIFY(!plan.entries[2].liveKnown);
    }

    void driftIsTheChangedEntries()
    {
        // verify = diff after apply: whatever still differs has drifted.
        LiveValues live = defaults();
        const Profile profile = parsed("  llite.*.max_read_ahead_mb: 2048\n");
        QCOMPARE(diff(profile.params, nodeSchema(), live).changedCount(), 1u);
        live["llite.lutra.max_read_ahead_mb"] = "2048";
        QCOMPARE(diff(profile.params, nodeSchema(), live).changedCount(), 0u);
        live["llite.lutra.max_read_ahead_mb"] = "64"; // someone changed it by hand
        const Plan drift = diff(profile.params, nodeSchema(), live);
        QCOMPARE(planText(drift),
                 QStringList{"llite.lutra.max_read_ahead_mb: 64 -> 2048 [changed]"});
    }

    void exampleProfilesValidate()
    {
        ProfileSet set;
        const Diagnostics loadErrors = set.loadDirectory(LUTRA_EXAMPLE_PROFILES);
        QVERIFY2(loadErrors.empty(), qPrintable(texts(loadErrors).join('\n')));
        QCOMPARE(set.names(), (std::vector<std::string>{"base", "compute", "lu9906-ior"}));
        const Diagnostics errors = set.validate(nodeSchema());
        QVERIFY2(errors.empty(), qPrintable(texts(errors).join('\n')));
        for (const auto &name : set.names()) {
            const Resolved resolved = set.resolve(name);
            QVERIFY2(resolved.ok(), qPrintable(texts(resolved.errors).join('\n')));
            QVERIFY(texts(validateParams(resolved.params, nodeSchema())).isEmpty());
        }
    }

    void theLu9906ProfileIsTheTicketsTuning()
    {
        ProfileSet set;
        QVERIFY(set.loadDirectory(LUTRA_EXAMPLE_PROFILES).empty());
        const Resolved resolved = set.resolve("lu9906-ior");
        QVERIFY(resolved.ok());
        const Plan plan = diff(resolved.params, nodeSchema(), defaults());
        QVERIFY(plan.ok());
        QStringList changed;
        for (const auto &entry : plan.entries) {
            if (entry.changed) {
                changed << QString::fromStdString(entry.name + "=" + entry.desired);
            }
        }
        // lctl set_param osc.*.max_pages_per_rpc=16M osc.*.max_rpcs_in_flight=16
        //   osc.*.max_dirty_mb=512 osc.*.checksums=0 llite.*.max_read_ahead_mb=2048
        // on top of the base profile; max_dirty_mb=512 is already the default.
        QCOMPARE(changed, (QStringList{
                              "jobid_var=SLURM_JOB_ID",
                              "llite.lutra.max_cached_mb=8192",
                              "llite.lutra.max_read_ahead_mb=2048",
                              "osc.ost0.checksums=0",
                              "osc.ost0.max_pages_per_rpc=4096",
                              "osc.ost0.max_rpcs_in_flight=16",
                              "osc.ost1.checksums=0",
                              "osc.ost1.max_pages_per_rpc=4096",
                              "osc.ost1.max_rpcs_in_flight=16",
                          }));
        QVERIFY(set.find("lu9906-ior")->matches("anynode", {{"role", "benchmark"}}));
        QVERIFY(set.find("compute")->matches("node042", {{"role", "compute"}}));
        QVERIFY(!set.find("compute")->matches("node200", {{"role", "compute"}}));
    }
};

QTEST_GUILESS_MAIN(TestProfileSchema)
#include "test_profile_schema.moc"
