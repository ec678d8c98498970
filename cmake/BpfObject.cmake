# SPDX-License-Identifier: MIT
# bpf_object(NAME SOURCE): compiles bpf/NAME.bpf.c with clang -target bpf against a
# vmlinux.h generated from this machine's BTF, and generates NAME.skel.h with bpftool.
# Adds an INTERFACE library NAME_skel whose include directory holds the skeleton.
find_program(BPF_CLANG NAMES clang clang-14 REQUIRED)
find_program(BPFTOOL NAMES bpftool PATHS /usr/sbin /usr/local/sbin REQUIRED)
set(SCORCH_VMLINUX_BTF "/sys/kernel/btf/vmlinux" CACHE FILEPATH "BTF used to generate vmlinux.h")

if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
	set(BPF_TARGET_ARCH x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
	set(BPF_TARGET_ARCH arm64)
else()
	message(FATAL_ERROR "unsupported architecture for BPF: ${CMAKE_SYSTEM_PROCESSOR}")
endif()

set(BPF_GEN_DIR ${CMAKE_BINARY_DIR}/bpf-gen)
file(MAKE_DIRECTORY ${BPF_GEN_DIR})
add_custom_command(OUTPUT ${BPF_GEN_DIR}/vmlinux.h
	COMMAND ${BPFTOOL} btf dump file ${SCORCH_VMLINUX_BTF} format c > ${BPF_GEN_DIR}/vmlinux.h.tmp
	COMMAND ${CMAKE_COMMAND} -E rename ${BPF_GEN_DIR}/vmlinux.h.tmp ${BPF_GEN_DIR}/vmlinux.h
	COMMENT "Generating vmlinux.h from ${SCORCH_VMLINUX_BTF}"
	VERBATIM)
# One target owns vmlinux.h: BPF objects depend on the target, not on the file, or
# every skeleton target would carry its own copy of the rule and parallel builds
# would race on vmlinux.h.tmp.
add_custom_target(vmlinux_h DEPENDS ${BPF_GEN_DIR}/vmlinux.h)

function(bpf_object name src)
	set(obj ${BPF_GEN_DIR}/${name}.bpf.o)
	set(skel ${BPF_GEN_DIR}/${name}.skel.h)
	file(GLOB bpf_headers ${CMAKE_CURRENT_SOURCE_DIR}/*.h)
	add_custom_command(OUTPUT ${obj}
		COMMAND ${BPF_CLANG} -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_${BPF_TARGET_ARCH}
			-Wall -Werror -I${BPF_GEN_DIR} -I${CMAKE_CURRENT_SOURCE_DIR}
			-idirafter /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}
			-c ${CMAKE_CURRENT_SOURCE_DIR}/${src} -o ${obj}
		DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${src} ${bpf_headers} vmlinux_h
		COMMENT "BPF ${src}"
		VERBATIM)
	add_custom_command(OUTPUT ${skel}
		COMMAND ${BPFTOOL} gen skeleton ${obj} name ${name}_bpf > ${skel}.tmp
		COMMAND ${CMAKE_COMMAND} -E rename ${skel}.tmp ${skel}
		DEPENDS ${obj}
		COMMENT "Skeleton ${name}.skel.h"
		VERBATIM)
	add_custom_target(${name}_skel_gen DEPENDS ${skel})
	add_library(${name}_skel INTERFACE)
	add_dependencies(${name}_skel ${name}_skel_gen)
	target_include_directories(${name}_skel INTERFACE ${BPF_GEN_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
endfunction()
