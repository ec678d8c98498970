# SPDX-License-Identifier: MIT
# bash completion for scorch: the commands, each command's options (those its --help
# lists: tests/man/completion.sh checks both ways, so neither side drifts) and their
# values. cmake --install puts it in share/bash-completion/completions/scorch; from the
# tree: source docs/completion/scorch.bash. Works with or without bash-completion.

_scorch_commands='record top flamegraph diff symbolize collapse report check list-events'

# options shared by several commands (flamegraph.h's, symbolize.h's)
_scorch_graph_opts='--title --subtitle --width --height --minwidth --fonttype --fontsize
	--fontwidth --countname --nametype --colors --bgcolors --hash --cp --palette-file
	--reverse --inverted --flamechart --negate --self --notes --total --factor'
_scorch_name_opts='--lines --no-demangle --params --no-inline'

# _scorch_options CMD: the options of CMD, as its --help lists them
_scorch_options()
{
	case $1 in
	record)
		echo "-p --pid -t --tid -a --all -d --duration -F --frequency --max-overhead
			-U --user-only -K --kernel-only -I --include-idle -o --output --format
			--interval --max-stacks --mode --min-block --max-block --state
			--user-threads-only --kernel-threads-only --event --weight --period
			--latency --unwind --max-depth --stack-size --ring-size --no-python
			--chain-depth --timing -q --quiet -v --verbose -h --help $_scorch_name_opts
			$_scorch_graph_opts" ;;
	top)
		echo "-p --pid -t --tid -a --all --mode -F --frequency -d --duration --refresh
			--half-life --sort -n --rows -b --batch --max-overhead -U --user-only
			-K --kernel-only -I --include-idle -v --verbose -h --help
			$_scorch_name_opts" ;;
	flamegraph)
		echo "-o --output --format --intervals -v --verbose -h --help $_scorch_graph_opts" ;;
	diff)
		echo "-o --output --format -n --normalize -s --strip-hex --top -v --verbose
			-h --help $_scorch_graph_opts" ;;
	symbolize)
		echo "-p --pid -e --elf -k --kernel -r --return --no-dwarf --debug-root
			-v --verbose -h --help $_scorch_name_opts" ;;
	collapse)
		echo "-o --output --format --pid --tid --kernel --jit --all --no-annotate --addrs
			--event-filter --bpftrace-keys -v --verbose -h --help" ;;
	report)
		echo "-o --output --format --symfs --debug-root -q --quiet -v --verbose -h --help
			$_scorch_name_opts $_scorch_graph_opts" ;;
	check)
		echo "--json -v --verbose -h --help" ;;
	list-events)
		echo "-p --pid -h --help" ;;
	esac
}

# _scorch_formats CMD: what --format takes (the output's format; collapse: the input's)
_scorch_formats()
{
	case $1 in
	record) echo "folded svg html pprof speedscope capture" ;;
	report) echo "folded svg html pprof speedscope" ;;
	flamegraph) echo "svg html pprof speedscope" ;;
	diff) echo "folded svg html" ;;
	collapse) echo "auto perf bpftrace" ;;
	esac
}

# _scorch_value CMD OPT CUR: fills COMPREPLY with OPT's values; returns 1 when OPT
# takes no value
_scorch_value()
{
	local cmd=$1 opt=$2 cur=$3

	case $opt in
	-o | --output | --palette-file | -e | --elf)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "$cur")) ;;
	--symfs | --debug-root)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -d -- "$cur")) ;;
	--format)
		COMPREPLY=($(compgen -W "$(_scorch_formats "$cmd")" -- "$cur")) ;;
	--mode)
		# top's intervals cannot cut a wait before its waker is known
		if [ "$cmd" = top ]; then
			COMPREPLY=($(compgen -W "cpu offcpu wall" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "cpu offcpu wall offwake wakeup chain" -- "$cur"))
		fi ;;
	--sort)
		COMPREPLY=($(compgen -W "self total stacks" -- "$cur")) ;;
	--chain-depth)
		COMPREPLY=($(compgen -W "1 2 3 4" -- "$cur")) ;;
	-n | --rows)
		# diff's -n is a switch
		[ "$cmd" = diff ] && return 1
		COMPREPLY=() ;;
	--unwind)
		COMPREPLY=($(compgen -W "auto kernel fp dwarf" -- "$cur")) ;;
	--state)
		COMPREPLY=($(compgen -W "interruptible uninterruptible both" -- "$cur")) ;;
	--colors)
		COMPREPLY=($(compgen -W "hot mem io wakeup chain java js perl red green blue aqua
			yellow purple orange wall" -- "$cur")) ;;
	--bgcolors)
		COMPREPLY=($(compgen -W "yellow blue green grey" -- "$cur")) ;;
	--event)
		compopt -o nospace 2>/dev/null
		COMPREPLY=($(compgen -W "uprobe: uretprobe: usdt: tracepoint: page-faults
			context-switches cpu-migrations" -- "$cur")) ;;
	-p | --pid)
		# collapse's --pid is a switch
		[ "$cmd" = collapse ] && return 1
		COMPREPLY=($(compgen -W "$(cd /proc && echo [0-9]*)" -- "$cur")) ;;
	-t | --tid)
		[ "$cmd" = collapse ] && return 1
		COMPREPLY=($(compgen -W "$(cd /proc && echo [0-9]*/task/[0-9]* | sed 's|[0-9]*/task/||g')" -- "$cur")) ;;
	-d | --duration | -F | --frequency | --max-overhead | --interval | --max-stacks | \
		--min-block | --max-block | --weight | --period | --max-depth | --stack-size | \
		--ring-size | --top | --event-filter | --bpftrace-keys | --title | --subtitle | \
		--width | --height | --minwidth | --fonttype | --fontsize | --fontwidth | \
		--countname | --nametype | --notes | --total | --factor | --refresh | --half-life)
		COMPREPLY=() ;;
	*)
		return 1 ;;
	esac
	return 0
}

_scorch()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} cmd i

	COMPREPLY=()
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$_scorch_commands --help --version" -- "$cur"))
		return 0
	fi
	cmd=${COMP_WORDS[1]}
	# record -- COMMAND ARGS: the command's own completion
	for ((i = 2; i < COMP_CWORD; i++)); do
		if [ "${COMP_WORDS[i]}" = -- ] && [ "$cmd" = record ]; then
			if declare -F _command_offset >/dev/null; then
				_command_offset $((i + 1))
			elif [ "$COMP_CWORD" -eq $((i + 1)) ]; then
				COMPREPLY=($(compgen -c -- "$cur"))
			else
				compopt -o filenames 2>/dev/null
				COMPREPLY=($(compgen -f -- "$cur"))
			fi
			return 0
		fi
	done
	# --opt=VALUE: bash splits it at the '=' (COMP_WORDBREAKS)
	if [ "$prev" = = ] && [ "$COMP_CWORD" -ge 3 ]; then
		_scorch_value "$cmd" "${COMP_WORDS[COMP_CWORD - 2]}" "$cur" && return 0
	elif [ "$cur" = = ]; then
		_scorch_value "$cmd" "$prev" "" && return 0
	fi
	case $cur in
	-*)
		COMPREPLY=($(compgen -W "$(_scorch_options "$cmd")" -- "$cur"))
		return 0 ;;
	esac
	_scorch_value "$cmd" "$prev" "$cur" && return 0
	# the operands: files (profiles, captures, ELF files), none for check and top
	[ "$cmd" = check ] || [ "$cmd" = top ] && return 0
	compopt -o filenames 2>/dev/null
	COMPREPLY=($(compgen -f -- "$cur"))
	return 0
}

complete -F _scorch scorch
