# The client library for programs of a site's own (packaging builds only): the public headers
# <lutra/client.h>, <lutra/status.h>, <lutra/transport.h>, one static archive liblutra-client.a
# holding the client and everything it uses (lutra's libraries are static: merged with ar's
# MRI script), and lutra-client.pc for pkg-config. Transports load as plugins at run time.
set(client_archive ${CMAKE_CURRENT_BINARY_DIR}/client/liblutra-client.a)
set(client_parts lutra_client lutra_client_rpc lutra_protocol lutra_transport lutra_core)
set(mri "create ${client_archive}\n")
foreach(part IN LISTS client_parts)
  string(APPEND mri "addlib $<TARGET_FILE:${part}>\n")
endforeach()
string(APPEND mri "save\nend\n")
file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/client/merge.mri CONTENT "${mri}")
add_custom_command(
  OUTPUT ${client_archive}
  COMMAND ${CMAKE_COMMAND} -E rm -f ${client_archive}
  COMMAND sh -c "${CMAKE_AR} -M < ${CMAKE_CURRENT_BINARY_DIR}/client/merge.mri"
  DEPENDS ${client_parts} ${CMAKE_CURRENT_BINARY_DIR}/client/merge.mri
  COMMENT "liblutra-client.a" VERBATIM)
add_custom_target(lutra-client-archive ALL DEPENDS ${client_archive})

configure_file(lutra-client.pc.in ${CMAKE_CURRENT_BINARY_DIR}/client/lutra-client.pc @ONLY)
install(FILES ${client_archive} DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT datapath)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/client/lutra-client.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT datapath)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/datapath/include/lutra
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT datapath)
