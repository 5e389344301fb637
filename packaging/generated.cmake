# Files generated from the built programs (packaging builds only, LUTRA_BUILD_PACKAGES=ON): man
# pages from each program's --help (help2man), lutractl's bash completion, the changelogs.
find_program(HELP2MAN help2man REQUIRED)
find_program(GZIP gzip REQUIRED)
set(gen ${CMAKE_CURRENT_BINARY_DIR}/generated)
set(generated_files)

#   lutra_man_page(TARGET t SECTION n COMPONENT c NAME "what it is, for whatis")
function(lutra_man_page)
  cmake_parse_arguments(M "" "TARGET;SECTION;COMPONENT;NAME" "" ${ARGN})
  set(out ${gen}/man/${M_TARGET}.${M_SECTION}.gz)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/gen-man.sh $<TARGET_FILE:${M_TARGET}> ${M_SECTION}
            ${PROJECT_VERSION} "${M_NAME}" ${out}
    DEPENDS ${M_TARGET} ${CMAKE_CURRENT_SOURCE_DIR}/gen-man.sh
    COMMENT "help2man ${M_TARGET}")
  install(FILES ${out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${M_SECTION}
          COMPONENT ${M_COMPONENT})
  set(generated_files ${generated_files} ${out} PARENT_SCOPE)
endfunction()

lutra_man_page(TARGET lutra-target SECTION 1 COMPONENT datapath
               NAME "serve the objects under a backing directory to lutra clients")
lutra_man_page(TARGET lutra-params SECTION 1 COMPONENT datapath
               NAME "list, get and check the parameters of lutra datapath processes")
lutra_man_page(TARGET lutra-bench SECTION 1 COMPONENT datapath
               NAME "measure lutra against a baseline in the same run")
lutra_man_page(TARGET lutra-ctld SECTION 8 COMPONENT ctld
               NAME "the lutra node control daemon")
lutra_man_page(TARGET lutractl SECTION 1 COMPONENT ctld
               NAME "control lutra nodes through lutra-ctld")
lutra_man_page(TARGET lutra-ctl-bench SECTION 1 COMPONENT ctld
               NAME "measure lutra-ctld and lutractl against a baseline in the same run")
lutra_man_page(TARGET lutra-console SECTION 1 COMPONENT console
               NAME "operate a lutra cluster from the desktop")

set(completion ${gen}/completion/lutractl)
add_custom_command(
  OUTPUT ${completion}
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/gen-lutractl-completion.sh $<TARGET_FILE:lutractl>
          ${CMAKE_CURRENT_SOURCE_DIR}/lutractl-completion.bash ${completion}
  DEPENDS lutractl ${CMAKE_CURRENT_SOURCE_DIR}/gen-lutractl-completion.sh
          ${CMAKE_CURRENT_SOURCE_DIR}/lutractl-completion.bash
  COMMENT "bash completion for lutractl")
install(FILES ${completion} DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        COMPONENT ctld)
list(APPEND generated_files ${completion})

# Native Debian packages carry /usr/share/doc/<package>/changelog.gz (gzip -n: reproducible).
configure_file(changelog.in ${gen}/changelog @ONLY)
add_custom_command(
  OUTPUT ${gen}/changelog.gz
  COMMAND ${GZIP} -9nc ${gen}/changelog > ${gen}/changelog.gz
  DEPENDS ${gen}/changelog
  COMMENT "changelog.gz")
list(APPEND generated_files ${gen}/changelog.gz)
foreach(component IN ITEMS datapath ctld console)
  install(FILES ${gen}/changelog.gz DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${pkg_${component}}
          COMPONENT ${component})
endforeach()

add_custom_target(lutra-package-files ALL DEPENDS ${generated_files})
