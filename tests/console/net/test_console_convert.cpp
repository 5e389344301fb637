// The net layer's conversions from lutra.ctl.v1 / lutra.params.v1 messages to console types.
#include "net/convert.h"

#include <QTest>

using namespace lutra;
using namespace lutra::console;

class TestConsoleConvert : public QObject {
    Q_OBJECT

private slots:
    void roles()
    {
        QCOMPARE(convert::role(ctl::v1::ROLE_VIEWER), Role::viewer);
        QCOMPARE(convert::role(ctl::v1::ROLE_OPERATOR), Role::operator_);
        QCOMPARE(convert::role(ctl::v1::ROLE_ADMIN), Role::admin);
        QCOMPARE(convert::role(ctl::v1::ROLE_UNSPECIFIED), Role::unknown);
        QCOMPARE(convert::role(static_cast<ctl::v1::Role>(42)), Role::unknown);
    }

    void nodeInfoAndInstances()
    {
        ctl::v1::NodeInfo wire;
        wire.set_node("node001");
        (*wire.mutable_labels())["rack"] = "r7";
        wire.set_version("0.1.0");
        wire.set_start_time_ns(123);
        wire.set_principal("ada");
        wire.set_role(ctl::v1::ROLE_ADMIN);
        wire.set_instance_count(2);
        wire.set_last_profile("lu-9906");
        const auto info = convert::nodeInfo(wire);
        QCOMPARE(info.node, QString("node001"));
        QCOMPARE(info.labels.value("rack"), QString("r7"));
        QCOMPARE(info.startTimeNs, 123);
        QCOMPARE(info.principal, QString("ada"));
        QCOMPARE(info.role, Role::admin);
        QCOMPARE(info.instanceCount, 2);
        QCOMPARE(info.lastProfile, QString("lu-9906"));

        ctl::v1::ListInstancesReply list;
        auto *instance = list.add_instances();
        instance->set_id("bench-job1001");
        instance->set_kind("bench");
        instance->set_name("job1001");
        instance->set_pid(4242);
        instance->set_connected(true);
        instance->set_seen_since_ns(99);
        instance->set_restarts(3);
        const auto instances = convert::instances(list);
        QCOMPARE(instances.size(), 1);
        QCOMPARE(instances[0].id, QString("bench-job1001"));
        QCOMPARE(instances[0].kind, QString("bench"));
        QCOMPARE(instances[0].name, QString("job1001"));
        QCOMPARE(instances[0].pid, 4242);
        QVERIFY(instances[0].connected);
        QCOMPARE(instances[0].seenSinceNs, 99);
        QCOMPARE(instances[0].restarts, 3);
    }

    void paramTypesAndSpecs()
    {
        using params::v1::ParamType;
        const QList<std::pair<ParamType, lutra::console::ParamType>> types{
            {params::v1::PARAM_TYPE_UNSPECIFIED, console::ParamType::unspecified},
            {params::v1::PARAM_TYPE_INTEGER, console::ParamType::integer},
            {params::v1::PARAM_TYPE_SIZE, console::ParamType::size},
            {params::v1::PARAM_TYPE_BOOLEAN, console::ParamType::boolean},
            {params::v1::PARAM_TYPE_ENUM, console::ParamType::enumeration},
            {params::v1::PARAM_TYPE_DURATION, console::ParamType::duration},
            {params::v1::PARAM_TYPE_STRING, console::ParamType::string},
            {params::v1::PARAM_TYPE_COUNTERS, console::ParamType::counters},
        };
        for (const auto &[wire, expected] : types) {
            QCOMPARE(convert::paramType(wire), expected);
        }

        ctl::v1::ListParamsReply reply;
        auto *instance = reply.add_instances();
        instance->set_instance("bench-a");
        auto *spec = instance->add_specs();
        spec->set_name("osc.ost0.checksum_type");
        spec->set_type(params::v1::PARAM_TYPE_ENUM);
        spec->set_unit("");
        spec->set_min(0);
        spec->set_max(2);
        spec->set_default_value("crc32c");
        spec->set_writable(true);
        spec->set_help("checksum algorithm");
        spec->add_choices("crc32");
        spec->add_choices("crc32c");
        auto *special = spec->add_special_values();
        special->set_word("clear");
        special->set_help("reset");
        spec->set_allowed("one of crc32, crc32c");
        spec->set_text_commands(true);
        const auto specs = convert::instanceSpecs(reply);
        QCOMPARE(specs.size(), 1);
        QCOMPARE(specs[0].instance, QString("bench-a"));
        QCOMPARE(specs[0].specs.size(), 1);
        const auto &one = specs[0].specs[0];
        QCOMPARE(one.name, QString("osc.ost0.checksum_type"));
        QCOMPARE(one.type, console::ParamType::enumeration);
        QCOMPARE(one.max, 2);
        QCOMPARE(one.defaultValue, QString("crc32c"));
        QVERIFY(one.writable);
        QCOMPARE(one.choices, QStringList({"crc32", "crc32c"}));
        QCOMPARE(one.specialValues.size(), 1);
        QCOMPARE(one.specialValues[0].word, QString("clear"));
        QCOMPARE(one.specialValues[0].help, QString("reset"));
        QCOMPARE(one.allowed, QString("one of crc32, crc32c"));
        QVERIFY(one.textCommands);

        ctl::v1::GetParamsReply values;
        auto *value = values.add_values();
        value->set_instance("bench-a");
        value->set_name("osc.ost0.max_pages_per_rpc");
        value->set_value("1024");
        const auto converted = convert::values(values);
        QCOMPARE(converted.size(), 1);
        QCOMPARE(converted[0].instance, QString("bench-a"));
        QCOMPARE(converted[0].name, QString("osc.ost0.max_pages_per_rpc"));
        QCOMPARE(converted[0].value, QString("1024"));
    }

    void setOutcomeWithErrors()
    {
        ctl::v1::SetParamsReply reply;
        reply.set_applied(false);
        reply.set_history_id(0);
        auto *instance = reply.add_instances();
        instance->set_instance("bench-a");
        auto *batch = instance->mutable_result();
        batch->set_applied(false);
        auto *batchError = batch->add_errors();
        batchError->set_code(params::v1::ERROR_CODE_OUT_OF_RANGE);
        batchError->set_message("osc.ost0.max_pages_per_rpc: 99999 is above 4096");
        auto *bad = batch->add_results();
        bad->set_name("osc.ost0.max_pages_per_rpc");
        bad->set_old_value("1024");
        bad->set_requested("99999");
        bad->mutable_error()->set_code(params::v1::ERROR_CODE_OUT_OF_RANGE);
        bad->mutable_error()->set_message("99999 is above 4096");
        auto *good = batch->add_results();
        good->set_name("osc.ost0.max_rpcs_in_flight");
        good->set_old_value("8");
        good->set_requested("16");
        good->set_read_back("16");
        good->set_clamped(true);
        good->set_rolled_back(true);
        auto *nodeError = reply.add_errors();
        nodeError->set_code(params::v1::ERROR_CODE_NOT_FOUND);
        auto *nodeError2 = reply.add_errors();
        nodeError2->set_code(params::v1::ERROR_CODE_NOT_FOUND);
        nodeError2->set_message("llite.*.nope matched nothing");

        const auto outcome = convert::setOutcome(reply, true);
        QVERIFY(!outcome.applied);
        QVERIFY(outcome.dryRun);
        QCOMPARE(outcome.instances.size(), 1);
        const auto &one = outcome.instances[0];
        QCOMPARE(one.instance, QString("bench-a"));
        QVERIFY(!one.applied);
        QCOMPARE(one.errors, QStringList({"osc.ost0.max_pages_per_rpc: 99999 is above 4096"}));
        QCOMPARE(one.entries.size(), 2);
        QCOMPARE(one.entries[0].oldValue, QString("1024"));
        QCOMPARE(one.entries[0].requested, QString("99999"));
        QCOMPARE(one.entries[0].error, QString("99999 is above 4096"));
        QCOMPARE(one.entries[1].readBack, QString("16"));
        QVERIFY(one.entries[1].error.isEmpty()); // ERROR_CODE_OK: applied
        QVERIFY(one.entries[1].clamped);
        QVERIFY(one.entries[1].rolledBack);
        QVERIFY(!one.entries[1].special);
        // A message-less error still says what went wrong.
        QCOMPARE(outcome.errors,
                 QStringList({"ERROR_CODE_NOT_FOUND", "llite.*.nope matched nothing"}));
    }

    void counterBlocksAndUpdates()
    {
        ctl::v1::CounterUpdate update;
        update.set_time_ns(1000);
        auto *instance = update.add_instances();
        instance->set_instance("bench-a");
        auto *block = instance->add_blocks();
        block->set_name("llite.bench.read_ahead_stats");
        block->set_snapshot_time_ns(900);
        block->set_start_time_ns(100);
        auto *hits = block->add_counters();
        hits->set_name("hits");
        hits->set_unit("pages");
        hits->set_samples(77);
        auto *sized = block->add_counters();
        sized->set_name("read_bytes");
        sized->set_samples(5);
        sized->set_with_min_max_sum(true);
        sized->set_min(-1);
        sized->set_max(4096);
        sized->set_sum(8192);
        auto *gauge = instance->add_gauges();
        gauge->set_instance("bench-a");
        gauge->set_name("ldlm.namespaces.ost0.lock_count");
        gauge->set_value("12");

        const auto converted = convert::counterUpdate(update);
        QCOMPARE(converted.timeNs, 1000);
        QCOMPARE(converted.instances.size(), 1);
        const auto &counters = converted.instances[0];
        QCOMPARE(counters.instance, QString("bench-a"));
        QCOMPARE(counters.blocks.size(), 1);
        QCOMPARE(counters.blocks[0].name, QString("llite.bench.read_ahead_stats"));
        QCOMPARE(counters.blocks[0].snapshotTimeNs, 900);
        QCOMPARE(counters.blocks[0].startTimeNs, 100);
        QCOMPARE(counters.blocks[0].counters.size(), 2);
        QCOMPARE(counters.blocks[0].counters[0].name, QString("hits"));
        QCOMPARE(counters.blocks[0].counters[0].unit, QString("pages"));
        QCOMPARE(counters.blocks[0].counters[0].samples, 77u);
        QVERIFY(!counters.blocks[0].counters[0].withMinMaxSum);
        QVERIFY(counters.blocks[0].counters[1].withMinMaxSum);
        QCOMPARE(counters.blocks[0].counters[1].min, -1);
        QCOMPARE(counters.blocks[0].counters[1].max, 4096);
        QCOMPARE(counters.blocks[0].counters[1].sum, 8192);
        QCOMPARE(counters.gauges.size(), 1);
        QCOMPARE(counters.gauges[0].name, QString("ldlm.namespaces.ost0.lock_count"));
        QCOMPARE(counters.gauges[0].value, QString("12"));
    }

    void history()
    {
        ctl::v1::GetCounterHistoryReply reply;
        auto *series = reply.add_series();
        series->set_instance("bench-a");
        series->set_counter("ldlm.namespaces.ost0.lock_count");
        for (const auto &[time, value, low, high] :
             {std::tuple{10, 5, 1, 9}, std::tuple{20, 7, 7, 8}}) {
            series->add_time_ns(time);
            series->add_value(value);
            series->add_min(low);
            series->add_max(high);
        }
        const auto converted = convert::history(reply);
        QCOMPARE(converted.size(), 1);
        QCOMPARE(converted[0].instance, QString("bench-a"));
        QCOMPARE(converted[0].counter, QString("ldlm.namespaces.ost0.lock_count"));
        QCOMPARE(converted[0].timeNs, QList<qint64>({10, 20}));
        QCOMPARE(converted[0].value, QList<qint64>({5, 7}));
        QCOMPARE(converted[0].min, QList<qint64>({1, 7}));
        QCOMPARE(converted[0].max, QList<qint64>({9, 8}));
    }

    void profiles()
    {
        ctl::v1::ListProfilesReply list;
        auto *summary = list.add_profiles();
        summary->set_name("compute");
        summary->set_description("compute nodes");
        summary->add_extends("base");
        summary->set_matches_node(true);
        summary->set_source("/etc/lutra/profiles/compute.yaml");
        auto *stored = list.add_profiles();
        stored->set_name("mine");
        stored->set_source("stored");
        stored->set_updated_ns(77);
        auto *loadError = list.add_errors();
        loadError->set_file("broken.yaml");
        loadError->set_line(3);
        loadError->set_column(5);
        loadError->set_message("unknown key 'parms'");
        const auto converted = convert::profileList(list);
        QCOMPARE(converted.profiles.size(), 2);
        QCOMPARE(converted.profiles[0].name, QString("compute"));
        QCOMPARE(converted.profiles[0].description, QString("compute nodes"));
        QCOMPARE(converted.profiles[0].extends, QStringList({"base"}));
        QVERIFY(converted.profiles[0].matchesNode);
        QCOMPARE(converted.profiles[0].source, QString("/etc/lutra/profiles/compute.yaml"));
        QCOMPARE(converted.profiles[0].updatedNs, 0);
        QVERIFY(!converted.profiles[1].matchesNode);
        QCOMPARE(converted.profiles[1].source, QString("stored"));
        QCOMPARE(converted.profiles[1].updatedNs, 77);
        QCOMPARE(converted.errors.size(), 1);
        QCOMPARE(converted.errors[0].file, QString("broken.yaml"));
        QCOMPARE(converted.errors[0].line, 3);
        QCOMPARE(converted.errors[0].column, 5);
        QCOMPARE(converted.errors[0].message, QString("unknown key 'parms'"));

        ctl::v1::GetProfileReply get;
        get.set_name("mine");
        get.set_yaml("name: mine\n");
        get.set_source("stored");
        const auto text = convert::profileText(get);
        QCOMPARE(text.name, QString("mine"));
        QCOMPARE(text.yaml, QString("name: mine\n"));
        QCOMPARE(text.source, QString("stored"));

        ctl::v1::PutProfileReply put;
        put.set_name("mine");
        QVERIFY(convert::profileErrors(put).isEmpty());
        *put.add_errors() = list.errors(0);
        const auto errors = convert::profileErrors(put);
        QCOMPARE(errors.size(), 1);
        QCOMPARE(profileErrorText(errors[0]), QString("broken.yaml:3:5: unknown key 'parms'"));
    }

    void profilePlans()
    {
        ctl::v1::ProfilePlan plan;
        plan.set_profile("compute");
        plan.set_matches_node(true);
        auto *entry = plan.add_entries();
        entry->set_instance("bench-a");
        entry->set_name("llite.bench.max_read_ahead_mb");
        entry->set_live("64");
        entry->set_desired("256");
        entry->set_changed(true);
        entry->set_source("compute.yaml:14:3");
        auto *same = plan.add_entries();
        same->set_instance("bench-a");
        same->set_name("osc.ost0.checksums");
        same->set_live("1");
        same->set_desired("on");
        plan.set_applied(true);
        plan.set_history_id(42);
        auto *result = plan.add_results();
        result->set_instance("bench-a");
        result->mutable_result()->set_applied(true);
        auto *set = result->mutable_result()->add_results();
        set->set_name("llite.bench.max_read_ahead_mb");
        set->set_old_value("64");
        set->set_requested("256");
        set->set_read_back("256");
        plan.set_drift(1);
        auto *planError = plan.add_errors();
        planError->set_file("testnode");
        planError->set_message("restored after a failure");

        const auto converted = convert::profilePlan(plan);
        QCOMPARE(converted.profile, QString("compute"));
        QVERIFY(converted.matchesNode);
        QCOMPARE(converted.entries.size(), 2);
        QCOMPARE(converted.entries[0].instance, QString("bench-a"));
        QCOMPARE(converted.entries[0].name, QString("llite.bench.max_read_ahead_mb"));
        QCOMPARE(converted.entries[0].live, QString("64"));
        QCOMPARE(converted.entries[0].desired, QString("256"));
        QVERIFY(converted.entries[0].changed);
        QCOMPARE(converted.entries[0].source, QString("compute.yaml:14:3"));
        QVERIFY(!converted.entries[1].changed);
        QVERIFY(converted.applied);
        QCOMPARE(converted.historyId, 42u);
        QCOMPARE(converted.results.size(), 1);
        QCOMPARE(converted.results[0].instance, QString("bench-a"));
        QVERIFY(converted.results[0].applied);
        QCOMPARE(converted.results[0].entries.size(), 1);
        QCOMPARE(converted.results[0].entries[0].readBack, QString("256"));
        QVERIFY(converted.results[0].entries[0].error.isEmpty());
        QCOMPARE(converted.drift, 1);
        QCOMPARE(converted.errors.size(), 1);
        QCOMPARE(profileErrorText(converted.errors[0]),
                 QString("testnode: restored after a failure"));
    }

    void rollbackOutcomes()
    {
        ctl::v1::RollbackReply reply;
        reply.set_applied(false);
        reply.set_history_id(0);
        auto *entry = reply.add_entries();
        entry->set_instance("bench-a");
        entry->set_name("osc.ost0.max_pages_per_rpc");
        entry->set_live("512");
        entry->set_desired("1024");
        entry->set_changed(true);
        entry->set_source("point 7");
        auto *result = reply.add_results();
        result->set_instance("bench-a");
        auto *gone = reply.add_errors();
        gone->set_code(params::v1::ERROR_CODE_NOT_FOUND);
        gone->set_message("bench-b osc.ost0.max_pages_per_rpc: not running now");
        const auto converted = convert::rollbackOutcome(reply);
        QVERIFY(!converted.applied);
        QCOMPARE(converted.historyId, 0u);
        QCOMPARE(converted.entries.size(), 1);
        QCOMPARE(converted.entries[0].live, QString("512"));
        QCOMPARE(converted.entries[0].desired, QString("1024"));
        QCOMPARE(converted.entries[0].source, QString("point 7"));
        QCOMPARE(converted.results.size(), 1);
        QCOMPARE(converted.results[0].instance, QString("bench-a"));
        QCOMPARE(converted.errors,
                 QStringList({"bench-b osc.ost0.max_pages_per_rpc: not running now"}));
    }

    void flushAndJobStats()
    {
        ctl::v1::FlushJobReply reply;
        reply.set_job_id("jobA");
        reply.set_ok(false);
        reply.set_duration_us(1500);
        reply.set_history_id(9);
        auto *good = reply.add_instances();
        good->set_instance("bench-a");
        good->set_locks_cancelled(3);
        good->set_pages_dropped(512);
        good->set_bytes_written_back(1 << 20);
        good->set_duration_us(1200);
        good->add_errors("write-back of ost0 retried once");
        auto *bad = reply.add_instances();
        bad->set_instance("bench-b");
        bad->mutable_error()->set_code(params::v1::ERROR_CODE_UNAVAILABLE);
        bad->mutable_error()->set_message("bench-b: connection refused");
        const auto flush = convert::flushOutcome(reply);
        QCOMPARE(flush.jobId, QString("jobA"));
        QVERIFY(!flush.ok);
        QCOMPARE(flush.durationUs, 1500u);
        QCOMPARE(flush.historyId, 9u);
        QCOMPARE(flush.instances.size(), 2);
        QCOMPARE(flush.instances[0].instance, QString("bench-a"));
        QVERIFY(flush.instances[0].error.isEmpty());
        QCOMPARE(flush.instances[0].locksCancelled, 3u);
        QCOMPARE(flush.instances[0].pagesDropped, 512u);
        QCOMPARE(flush.instances[0].bytesWrittenBack, quint64(1) << 20);
        QCOMPARE(flush.instances[0].durationUs, 1200u);
        QCOMPARE(flush.instances[0].problems, QStringList({"write-back of ost0 retried once"}));
        QCOMPARE(flush.instances[1].error, QString("bench-b: connection refused"));

        ctl::v1::GetJobStatsReply stats;
        auto *job = stats.add_jobs();
        job->set_instance("bench-a");
        job->set_block("llite.bench.job_stats");
        job->set_job_id("jobA");
        job->set_snapshot_time_s(1700000000);
        auto *read = job->add_counters();
        read->set_name("read_bytes");
        read->set_unit("bytes");
        read->set_samples(10);
        read->set_with_min_max_sum(true);
        read->set_min(4096);
        read->set_max(1 << 20);
        read->set_sum(5 << 20);
        const auto jobs = convert::jobStats(stats);
        QCOMPARE(jobs.size(), 1);
        QCOMPARE(jobs[0].instance, QString("bench-a"));
        QCOMPARE(jobs[0].block, QString("llite.bench.job_stats"));
        QCOMPARE(jobs[0].jobId, QString("jobA"));
        QCOMPARE(jobs[0].snapshotTimeS, 1700000000);
        QCOMPARE(jobs[0].counters.size(), 1);
        QCOMPARE(jobs[0].counters[0].name, QString("read_bytes"));
        QCOMPARE(jobs[0].counters[0].unit, QString("bytes"));
        QCOMPARE(jobs[0].counters[0].samples, 10u);
        QVERIFY(jobs[0].counters[0].withMinMaxSum);
        QCOMPARE(jobs[0].counters[0].min, 4096);
        QCOMPARE(jobs[0].counters[0].max, 1 << 20);
        QCOMPARE(jobs[0].counters[0].sum, 5 << 20);
    }

    void historyPages()
    {
        ctl::v1::ListHistoryReply reply;
        auto *point = reply.add_points();
        point->set_id(12);
        point->set_time_ns(5000);
        point->set_principal("ada");
        point->set_action("apply");
        point->set_description("apply profile compute");
        point->set_profile("compute");
        point->set_outcome("applied");
        auto *change = point->add_changes();
        change->set_instance("bench-a");
        change->set_name("llite.bench.max_read_ahead_mb");
        change->set_old_value("64");
        change->set_requested("256");
        change->set_read_back("256");
        change->set_ok(true);
        auto *failed = point->add_changes();
        failed->set_instance("bench-b");
        failed->set_name("llite.bench.max_read_ahead_mb");
        failed->set_error("out of range");
        reply.add_points()->set_id(11);
        reply.set_next_before_id(11);
        const auto page = convert::historyPage(reply);
        QCOMPARE(page.points.size(), 2);
        QCOMPARE(page.nextBeforeId, 11u);
        const auto &first = page.points[0];
        QCOMPARE(first.id, 12u);
        QCOMPARE(first.timeNs, 5000);
        QCOMPARE(first.principal, QString("ada"));
        QCOMPARE(first.action, QString("apply"));
        QCOMPARE(first.description, QString("apply profile compute"));
        QCOMPARE(first.profile, QString("compute"));
        QCOMPARE(first.outcome, QString("applied"));
        QCOMPARE(first.changes.size(), 2);
        QCOMPARE(first.changes[0].instance, QString("bench-a"));
        QCOMPARE(first.changes[0].name, QString("llite.bench.max_read_ahead_mb"));
        QCOMPARE(first.changes[0].oldValue, QString("64"));
        QCOMPARE(first.changes[0].requested, QString("256"));
        QCOMPARE(first.changes[0].readBack, QString("256"));
        QVERIFY(first.changes[0].ok);
        QVERIFY(first.changes[0].error.isEmpty());
        QVERIFY(!first.changes[1].ok);
        QCOMPARE(first.changes[1].error, QString("out of range"));
        QCOMPARE(page.points[1].id, 11u);
        QVERIFY(page.points[1].changes.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestConsoleConvert)
#include "test_console_convert.moc"
