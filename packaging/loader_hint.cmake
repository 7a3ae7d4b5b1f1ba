# Run at the end of `cmake --install`: says how programs will find
# libdtrain.so.0 when the dynamic loader does not already. DTRAIN_LIBDIR is
# the library folder under the prefix.
if(IS_ABSOLUTE "${DTRAIN_LIBDIR}")
  set(_libdir "$ENV{DESTDIR}${DTRAIN_LIBDIR}")
else()
  set(_libdir "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${DTRAIN_LIBDIR}")
endif()
# A staged install (DESTDIR, as packaging does) is not where programs load from.
if("$ENV{DESTDIR}" STREQUAL "")
  execute_process(COMMAND ldconfig -p OUTPUT_VARIABLE _cache ERROR_QUIET RESULT_VARIABLE _ldconfig_failed)
  string(FIND "${_cache}" "=> ${_libdir}/libdtrain.so.0\n" _found)
  if(_found EQUAL -1)
    message(STATUS "libdtrain.so.0 is installed in ${_libdir}, where the dynamic loader does not find it yet.\n"
      "   Programs linked against it (pkg-config, find_package, the Rust crate) need one of:\n"
      "   - `ldconfig` (as root) when ${_libdir} is a folder the loader searches (/usr/local/lib is,\n"
      "     on Debian and most distributions), or a file naming it in /etc/ld.so.conf.d/ and then `ldconfig`;\n"
      "   - an rpath when linking: -Wl,-rpath,${_libdir}\n"
      "     (CMake adds one by itself to programs it builds with find_package(dtrain));\n"
      "   - LD_LIBRARY_PATH=${_libdir} when running them.")
  endif()
endif()
