# Locates ns-3 headers and libraries without ns-3's exported CMake package:
# the PyPI wheel's targets carry paths of the machine it was built on, so we
# declare our own imported target `ns3::imported` from plain directories.
#
# Inputs:  NS3_PREFIX (optional). Outputs: NS3_INCLUDE_DIR, NS3_LIB_DIR,
# NS3_VERSION, NS3WH_NS3_FROM_WHEEL, target ns3::imported (core + network).

set(NS3WH_NS3_FROM_WHEEL OFF)
if(NS3_PREFIX)
  set(_ns3_include_candidates ${NS3_PREFIX}/include)
  file(GLOB _versioned LIST_DIRECTORIES true ${NS3_PREFIX}/include/ns3.*)
  list(APPEND _ns3_include_candidates ${_versioned})
  set(_ns3_lib_candidates ${NS3_PREFIX}/lib64 ${NS3_PREFIX}/lib ${NS3_PREFIX}/lib/${CMAKE_LIBRARY_ARCHITECTURE})
else()
  if(NOT Python_EXECUTABLE)
    find_package(Python 3.10 REQUIRED COMPONENTS Interpreter)
  endif()
  execute_process(
    COMMAND ${Python_EXECUTABLE} -c
      "import importlib.util, os; s = importlib.util.find_spec('ns3'); print(os.path.dirname(s.origin) if s.origin else list(s.submodule_search_locations)[0])"
    OUTPUT_VARIABLE _ns3_pkg OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0 OR NOT _ns3_pkg)
    message(FATAL_ERROR "The Python package `ns3` (PyPI ns3==3.44.post0) is not importable from ${Python_EXECUTABLE}; install it or set -DNS3_PREFIX=<ns-3 install prefix>.")
  endif()
  set(_ns3_include_candidates ${_ns3_pkg}/include)
  set(_ns3_lib_candidates ${_ns3_pkg}/lib64 ${_ns3_pkg}/lib)
  set(NS3WH_NS3_FROM_WHEEL ON)
endif()

find_path(NS3_INCLUDE_DIR ns3/simulator-impl.h PATHS ${_ns3_include_candidates} NO_DEFAULT_PATH)
if(NOT NS3_INCLUDE_DIR)
  message(FATAL_ERROR "ns-3 headers (ns3/simulator-impl.h) not found in: ${_ns3_include_candidates}")
endif()

foreach(_dir ${_ns3_lib_candidates})
  file(GLOB _core_libs ${_dir}/libns3*-core*.so)
  if(_core_libs)
    list(GET _core_libs 0 _core_lib)
    set(NS3_LIB_DIR ${_dir})
    break()
  endif()
endforeach()
if(NOT NS3_LIB_DIR)
  message(FATAL_ERROR "ns-3 core library (libns3*-core*.so) not found in: ${_ns3_lib_candidates}")
endif()

# libns3.44-core.so, libns3.37-core-default.so, ...: keep the version and suffix.
get_filename_component(_core_name ${_core_lib} NAME)
string(REGEX MATCH "^libns3([.0-9]*)-core(.*)\\.so$" _m ${_core_name})
set(_dotted_version "${CMAKE_MATCH_1}")
set(_suffix "${CMAKE_MATCH_2}")
set(NS3_VERSION "3${_dotted_version}")

set(NS3_LIBRARY_NAMES "")
add_library(ns3::imported INTERFACE IMPORTED)
foreach(_module core network)
  set(_lib ${NS3_LIB_DIR}/libns3${_dotted_version}-${_module}${_suffix}.so)
  if(NOT EXISTS ${_lib})
    message(FATAL_ERROR "ns-3 library not found: ${_lib}")
  endif()
  target_link_libraries(ns3::imported INTERFACE ${_lib})
  list(APPEND NS3_LIBRARY_NAMES ns3${_dotted_version}-${_module}${_suffix})
endforeach()
target_include_directories(ns3::imported SYSTEM INTERFACE ${NS3_INCLUDE_DIR})
# The wheel is a release build with logging and asserts compiled in; match it
# so inline code in ns-3 headers behaves as in the libraries.
target_compile_definitions(ns3::imported INTERFACE NS3_LOG_ENABLE NS3_ASSERT_ENABLE)

# ns-3 <= 3.37 declares `void SimulatorImpl::Stop(const Time&)`; later ones return an EventId.
file(STRINGS ${NS3_INCLUDE_DIR}/ns3/simulator-impl.h _stop_void REGEX "virtual void Stop\\(const Time")
# Its headers are also not all valid C++20 (singleton.h), so ns-3 programs
# built against it use C++17; our own sources build either way.
set(NS3WH_PROGRAM_CXX_STD c++20)
if(_stop_void)
  target_compile_definitions(ns3::imported INTERFACE NS3WH_STOP_RETURNS_VOID)
  set(NS3WH_PROGRAM_CXX_STD c++17)
endif()

if(NS3WH_NS3_FROM_WHEEL)
  set(NS3WH_NS3_FROM_WHEEL_PY True)
else()
  set(NS3WH_NS3_FROM_WHEEL_PY False)
endif()
message(STATUS "ns-3 ${NS3_VERSION}: headers ${NS3_INCLUDE_DIR}, libraries ${NS3_LIB_DIR}")
