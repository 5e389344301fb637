#pragma once
// Profiles on a node: the ones shipped in profiles_dir and the ones stored in the database,
// validated against the live schema of the node's datapath processes, diffed, applied
// (all-or-nothing, through NodeOps) and verified.

#include "daemon/auth.h"
#include "daemon/node_ops.h"
#include "lutra/ctl/v1/ctl.pb.h"

namespace lutra::ctld {

class Store;

class ProfileOps {
public:
    enum class Mode { diff, apply, verify };

    ProfileOps(const Config &config, NodeOps &node, Instances &instances, Store &store);

    Status list(ctl::v1::ListProfilesReply *reply);
    // The document as written: a stored one (source "stored") before a shipped file of the same
    // name, as everywhere else. NOT_FOUND names the known profiles.
    Status get(const std::string &name, ctl::v1::GetProfileReply *reply);
    Status put(const std::string &yaml, const Caller &caller, ctl::v1::PutProfileReply *reply);
    // Deletes a stored profile (a history point); shipped files are not touched.
    Status remove(const std::string &name, const Caller &caller,
                  ctl::v1::DeleteProfileReply *reply);
    // Validation problems are returned in reply->errors (with file:line:column), not as a
    // failed call: a client shows them all. Nothing changes when there are any.
    Status run(Mode mode, const ctl::v1::ProfileRequest &request, const Caller &caller,
               ctl::v1::ProfilePlan *reply);
    std::string lastApplied();

private:
    const Config &m_config;
    NodeOps &m_node;
    Instances &m_instances;
    Store &m_store;
};

// History: the audit trail, rollback to a point, and counter history.
class HistoryOps {
public:
    HistoryOps(NodeOps &node, Store &store);

    Status history(const ctl::v1::ListHistoryRequest &request, ctl::v1::ListHistoryReply *reply);
    Status rollback(const ctl::v1::RollbackRequest &request, const Caller &caller,
                    ctl::v1::RollbackReply *reply);
    Status counterHistory(const ctl::v1::GetCounterHistoryRequest &request,
                          ctl::v1::GetCounterHistoryReply *reply);

private:
    NodeOps &m_node;
    Store &m_store;
};

} // namespace lutra::ctld
