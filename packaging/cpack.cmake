# CPack: three Debian packages, one per install component, dependencies from dpkg-shlibdeps.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME lutra)
set(CPACK_PACKAGE_VENDOR "the lutra project")
set(CPACK_PACKAGE_CONTACT "lutra maintainers <maintainers@lutra.example.org>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# /etc and /lib/systemd are absolute destinations: install with DESTDIR under the /usr prefix.
set(CPACK_SET_DESTDIR ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL datapath ctld console)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_DATAPATH_PACKAGE_NAME ${pkg_datapath})
set(CPACK_DEBIAN_DATAPATH_PACKAGE_SECTION net)
set(CPACK_DEBIAN_DATAPATH_PACKAGE_DEPENDS adduser)
set(CPACK_DEBIAN_DATAPATH_PACKAGE_CONTROL_EXTRA
    ${CMAKE_CURRENT_SOURCE_DIR}/maintainer/datapath/postinst
    ${CMAKE_CURRENT_SOURCE_DIR}/maintainer/datapath/postrm)
set(CPACK_COMPONENT_DATAPATH_DESCRIPTION
    "lutra storage client and object target
lutra is one tool for operating a parallel file system client fleet. This
package holds its datapath: lutra-target (an object target serving a backing
directory, one systemd instance lutra-target@<name> per target), lutra-params
(the parameter catalogue), lutra-bench (workloads measured against a baseline
in the same run), the tcp and verbs (RDMA) transport plugins, and the client
library for programs of a site's own (headers, a static archive and
pkg-config's lutra-client; linking needs libisal-dev).")

set(CPACK_DEBIAN_CTLD_PACKAGE_NAME ${pkg_ctld})
set(CPACK_DEBIAN_CTLD_PACKAGE_DEPENDS adduser)
# lutra-ctl-bench spawns lutra-target; the daemon itself only needs datapath processes to manage.
set(CPACK_DEBIAN_CTLD_PACKAGE_RECOMMENDS ${pkg_datapath})
set(CPACK_DEBIAN_CTLD_PACKAGE_CONTROL_EXTRA
    ${CMAKE_CURRENT_BINARY_DIR}/ctld/conffiles ${CMAKE_CURRENT_SOURCE_DIR}/maintainer/ctld/postinst
    ${CMAKE_CURRENT_SOURCE_DIR}/maintainer/ctld/prerm
    ${CMAKE_CURRENT_SOURCE_DIR}/maintainer/ctld/postrm)
set(CPACK_COMPONENT_CTLD_DESCRIPTION
    "lutra node control daemon and lutractl
lutra-ctld runs once per node: it validates, applies, records and re-applies
the tunables of every lutra datapath process on the node, keeps desired state,
profiles and the audit history in SQLite, and serves a gRPC API and Prometheus
metrics. lutractl is its command-line client, with lctl-style get_param,
set_param and list_param, profiles, rollback and per-job cleanup for Slurm
epilogs. lutra-ctl-bench measures the control plane against a baseline in the
same run and soaks it under faults.")

set(CPACK_DEBIAN_CONSOLE_PACKAGE_NAME ${pkg_console})
set(CPACK_DEBIAN_CONSOLE_PACKAGE_SECTION utils)
set(CPACK_COMPONENT_CONSOLE_DESCRIPTION
    "desktop console for lutra clusters
lutra-console operates a lutra cluster through each node's lutra-ctld: live
readahead and lock LRU charts per node and across the cluster, tunables edited
from the live schema, YAML profiles with dry runs, per-job cleanup and the
audit trail.")

include(CPack)
