# SPDX-License-Identifier: MIT
# Sanitizer and fuzzing builds (docs/testing.md, "Sanitizers" and "Fuzzing").
#
# SCORCH_SANITIZE=ON: every C target is compiled and linked with AddressSanitizer (leaks
#   included) and UndefinedBehaviorSanitizer, aborting on the first report. The BPF
#   objects (cmake/BpfObject.cmake) and the test fixtures built with explicit `cc`
#   commands are not affected. scripts/test.sh runs the whole suite this way in
#   build-asan/.
# SCORCH_FUZZ=ON (clang only): a fuzzing build. Everything is also instrumented for
#   libFuzzer's coverage feedback (-fsanitize=fuzzer-no-link), and every target declared
#   with scorch_add_fuzzer() is built; the `fuzzers` target builds all executables named
#   fuzz_*. scripts/fuzz.sh configures build-fuzz/ this way and runs them.
option(SCORCH_SANITIZE "Build everything with AddressSanitizer + UndefinedBehaviorSanitizer" OFF)
option(SCORCH_FUZZ "Build the libFuzzer targets (clang only; implies SCORCH_SANITIZE)" OFF)

if(SCORCH_FUZZ)
	if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
		message(FATAL_ERROR "SCORCH_FUZZ needs clang (libFuzzer), not ${CMAKE_C_COMPILER_ID}\n"
			"hint: configure a separate build directory with -DCMAKE_C_COMPILER=clang, "
			"as scripts/fuzz.sh does")
	endif()
	set(SCORCH_SANITIZE ON CACHE BOOL "" FORCE)
	add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(SCORCH_SANITIZE)
	# frame pointers: complete stacks in the reports, cheaply
	add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
		-fno-omit-frame-pointer)
	add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
endif()

# scorch_add_fuzzer(NAME SOURCES src... [LIBS lib...] [INCLUDES dir...])
# Declares the libFuzzer executable NAME (which must start with fuzz_) in a fuzzing build.
# Seeds live in tests/<area>/corpus/<NAME without fuzz_>/. In every other build the same
# sources are linked with tests/fuzz/replay.c into replay_<NAME without fuzz_>, and the
# test fuzz_replay_<...> (label unit) runs the entry point once on each committed seed:
# the regressions fuzzing found are checked by every ctest run, sanitized or not.
function(scorch_add_fuzzer name)
	cmake_parse_arguments(F "" "" "SOURCES;LIBS;INCLUDES" ${ARGN})
	if(NOT name MATCHES "^fuzz_")
		message(FATAL_ERROR "fuzz target ${name}: the name must start with fuzz_")
	endif()
	if(NOT SCORCH_FUZZ)
		string(REGEX REPLACE "^fuzz_" "" short ${name})
		set(corpus ${CMAKE_CURRENT_SOURCE_DIR}/corpus/${short})
		if(NOT IS_DIRECTORY ${corpus})
			return() # its seeds are made by the fuzzing build only
		endif()
		add_executable(replay_${short} ${F_SOURCES} ${PROJECT_SOURCE_DIR}/tests/fuzz/replay.c)
		target_include_directories(replay_${short} PRIVATE ${F_INCLUDES})
		target_link_libraries(replay_${short} PRIVATE scorch_common ${F_LIBS})
		add_test(NAME fuzz_replay_${short} COMMAND replay_${short} ${corpus})
		set_tests_properties(fuzz_replay_${short} PROPERTIES LABELS unit)
		return()
	endif()
	add_executable(${name} ${F_SOURCES})
	target_include_directories(${name} PRIVATE ${F_INCLUDES})
	target_link_libraries(${name} PRIVATE ${F_LIBS})
	target_link_options(${name} PRIVATE -fsanitize=fuzzer)
endfunction()

# Every executable named fuzz_* under @dir (recursively), for the `fuzzers` target: also
# the ones declared without scorch_add_fuzzer().
function(scorch_collect_fuzzers dir out)
	get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
	get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
	set(found "")
	foreach(t ${targets})
		get_target_property(type ${t} TYPE)
		if(t MATCHES "^fuzz_" AND type STREQUAL "EXECUTABLE")
			list(APPEND found ${t})
		endif()
	endforeach()
	foreach(d ${subdirs})
		scorch_collect_fuzzers(${d} sub)
		list(APPEND found ${sub})
	endforeach()
	set(${out} ${found} PARENT_SCOPE)
endfunction()

# The workloads of the tests (executables and libraries built from tests/workloads/, and
# bench/'s loadgen and cpujob) are what gets profiled: their profiles are known by
# construction, so they are built as users build programs, without sanitizers (ASan's
# interceptors would add frames, e.g. above read(), and its start-up would take the
# samples of short-lived processes: an ASan loadgen forked 20 children a second, not 300).
function(scorch_unsanitize_workloads dir)
	get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
	get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
	foreach(t ${targets})
		get_target_property(type ${t} TYPE)
		get_target_property(srcs ${t} SOURCES)
		if(NOT (type STREQUAL "EXECUTABLE" OR type STREQUAL "SHARED_LIBRARY") OR
		   NOT "${srcs}" MATCHES "tests/workloads/|/bench/")
			continue()
		endif()
		foreach(prop COMPILE_OPTIONS LINK_OPTIONS)
			get_target_property(opts ${t} ${prop})
			if(opts)
				list(FILTER opts EXCLUDE REGEX "sanitize")
				set_target_properties(${t} PROPERTIES ${prop} "${opts}")
			endif()
		endforeach()
	endforeach()
	foreach(d ${subdirs})
		scorch_unsanitize_workloads(${d})
	endforeach()
endfunction()
