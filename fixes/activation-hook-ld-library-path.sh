#!/bin/sh
# fix-id: activation-hook-ld-library-path
# summary: Write an activation hook into the target venv or conda env that sets what TensorFlow misses.
# needs-root: no
# reversible: yes
# covers: unset-cuda-visible-devices remove-stub-libcuda-from-path remove-from-ld-library-path
# usage: activation-hook-ld-library-path.sh [OPTION]... venv BIN_ACTIVATE | conda ENV_PREFIX
#        activation-hook-ld-library-path.sh --preload LIB... --only-for DIR preload PTH_FILE
#   --preload LIB        (preload mode) dlopen LIB by absolute path, RTLD_GLOBAL, when `tensorflow`
#                        is first imported; in the order given (dependencies first)
#   --only-for DIR       (preload mode) only while DIR exists: the .dist-info of the TensorFlow
#                        whose RUNPATH misses the libraries (another TF version: nothing happens)
#   --prepend DIR        put DIR first on LD_LIBRARY_PATH (pip nvidia/*/lib dirs TF's RUNPATH lacks)
#   --remove DIR         drop DIR from LD_LIBRARY_PATH (a toolkit stubs dir, a shadowing copy)
#   --xla-data-dir DIR   add --xla_gpu_cuda_data_dir=DIR to XLA_FLAGS (the last flag wins)
#   --cvd-from V --cvd-to W   when CUDA_VISIBLE_DEVICES is exactly V, set it to W (unset if W is
#                        empty); a value a scheduler chose is left alone
#   --memory-growth      export TF_FORCE_GPU_ALLOW_GROWTH=true
#
# venv: the hook is a marked block at the end of bin/activate (and of activate.fish and
# activate.csh when the venv has them), replaced (never duplicated) on a second run; in bash, zsh,
# fish and tcsh it wraps the venv's `deactivate` so that deactivating puts the variables back.
# conda: etc/conda/activate.d/tfdoctor.sh and deactivate.d/tfdoctor.sh, which conda sources on
# `conda activate` / `conda deactivate` (conda docs, "Saving environment variables").
# The block is POSIX sh and splits paths without word splitting, so it works in bash, zsh and dash.
# preload: a .pth file in site-packages, which every start of the interpreter reads (site.py), and
# the code it runs, readable, in a .py file of the same name beside it:
# activated or not, `env -i`, Jupyter kernels, IDEs, cron, sbatch. It only installs a
# sys.meta_path finder; the libraries are loaded when `tensorflow` is first looked up, so an
# interpreter that never imports TensorFlow pays one list insert. A missing library is skipped.
set -eu

prepend=; remove=; fremove=; xla=; cvd_from=; cvd_to=; cvd=; growth=; preload=; only_for=
fq() { printf "'%s'" "$(printf '%s' "$1" | sed "s/[\\\\']/\\\\&/g")"; }  # fish quoting
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
pyq() {  # a Python string literal for a path; quotes, backslashes and newlines are refused
    case "$1" in
        *[\\\'\"]*|*"
"*) echo "activation-hook: cannot preload a path with quotes or backslashes: $1" >&2; exit 2 ;;
    esac
    printf "'%s'" "$1"
}
while [ "$#" -gt 2 ]; do
    case "$1" in
        --prepend) prepend="${prepend:+$prepend:}$2"; remove="${remove:+$remove|}$(q "$2")"
                   fremove="$fremove $(fq "$2")"; shift 2 ;;
        --remove) remove="${remove:+$remove|}$(q "$2")"; fremove="$fremove $(fq "$2")"; shift 2 ;;
        --xla-data-dir) xla=$2; shift 2 ;;
        --cvd-from) cvd_from=$2; cvd=1; shift 2 ;;
        --cvd-to) cvd_to=$2; shift 2 ;;
        --memory-growth) growth=1; shift ;;
        --preload) preload="${preload}$(pyq "$2"),"; shift 2 ;;
        --only-for) only_for=$(pyq "$2"); shift 2 ;;
        *) echo "activation-hook: unknown option $1" >&2; exit 2 ;;
    esac
done
[ "$#" -eq 2 ] || { echo "activation-hook: need MODE and TARGET" >&2; exit 2; }
mode=$1; target=$2
vars="LD_LIBRARY_PATH XLA_FLAGS CUDA_VISIBLE_DEVICES TF_FORCE_GPU_ALLOW_GROWTH"

body() {  # the lines that set the variables
    pattern=$remove
    if [ -n "$pattern" ]; then
        cat <<EOF
_tfdoctor_rest="\${LD_LIBRARY_PATH-}:"; _tfdoctor_new=
while [ -n "\$_tfdoctor_rest" ]; do
    _tfdoctor_d="\${_tfdoctor_rest%%:*}"; _tfdoctor_rest="\${_tfdoctor_rest#*:}"
    case "\$_tfdoctor_d" in ''|$pattern) ;; *) _tfdoctor_new="\${_tfdoctor_new:+\$_tfdoctor_new:}\$_tfdoctor_d" ;; esac
done
_tfdoctor_new=$(q "$prepend")"\${_tfdoctor_new:+:\$_tfdoctor_new}"; _tfdoctor_new="\${_tfdoctor_new#:}"
if [ -n "\$_tfdoctor_new" ]; then export LD_LIBRARY_PATH="\$_tfdoctor_new"; else unset LD_LIBRARY_PATH; fi
unset _tfdoctor_rest _tfdoctor_new _tfdoctor_d
EOF
    fi
    if [ -n "$xla" ]; then
        printf 'export XLA_FLAGS="${XLA_FLAGS:+$XLA_FLAGS }"%s\n' "$(q "--xla_gpu_cuda_data_dir=$xla")"
    fi
    if [ -n "$cvd" ]; then
        if [ -n "$cvd_to" ]; then set_cvd="export CUDA_VISIBLE_DEVICES=$(q "$cvd_to")"
        else set_cvd="unset CUDA_VISIBLE_DEVICES"; fi
        printf 'if [ "${CUDA_VISIBLE_DEVICES-}" = %s ]; then %s; fi\n' "$(q "$cvd_from")" "$set_cvd"
    fi
    if [ -n "$growth" ]; then
        echo "export TF_FORCE_GPU_ALLOW_GROWTH=true"
    fi
}

save() {  # remember the values before activation, for deactivate (venv) or deactivate.d (conda)
    # Only once: sourcing activate again replaces `deactivate` before calling it, so the values
    # now are the hooked ones; the first saved values stay the ones to go back to.
    echo 'if [ -z "${_TFDOCTOR_HOOKED+x}" ]; then'
    for v in $vars; do
        printf '    if [ -n "${%s+x}" ]; then export _TFDOCTOR_OLD_%s="$%s"; else unset _TFDOCTOR_OLD_%s; fi\n' \
            "$v" "$v" "$v" "$v"
    done
    echo '    export _TFDOCTOR_HOOKED=1'
    echo 'fi'
}

restore() {
    for v in $vars; do
        printf 'if [ -n "${_TFDOCTOR_OLD_%s+x}" ]; then export %s="$_TFDOCTOR_OLD_%s"; else unset %s; fi\n' \
            "$v" "$v" "$v" "$v"
        printf 'unset _TFDOCTOR_OLD_%s\n' "$v"
    done
    echo 'unset _TFDOCTOR_HOOKED'
}

wrap_deactivate() {  # venv: `deactivate` puts our variables back as they were before activation
    # Copying a function needs `typeset -f` (bash, zsh); dash has no way to, so there the
    # variables are set but `deactivate` leaves them (dash sources bin/activate all the same).
    echo 'if command -v typeset >/dev/null 2>&1; then'
    echo 'eval "$(typeset -f deactivate | sed '"'"'1s/^deactivate/_tfdoctor_venv_deactivate/'"'"')"'
    echo 'deactivate () {'
    echo '    _tfdoctor_venv_deactivate "$@"'
    restore | sed 's/^/    /'
    echo '    [ "${1-}" = nondestructive ] || unset -f _tfdoctor_venv_deactivate'
    echo '}'
    echo 'fi'
}

fish_block() {  # the same for bin/activate.fish: save, change, and a wrapped `deactivate`
    echo 'if not set -q _TFDOCTOR_HOOKED'
    echo "    for _tfdoctor_v in $vars"
    echo '        if set -q $_tfdoctor_v; set -gx _TFDOCTOR_OLD_$_tfdoctor_v "$$_tfdoctor_v"'
    echo '        else; set -e _TFDOCTOR_OLD_$_tfdoctor_v; end'
    echo '    end'
    echo '    set -gx _TFDOCTOR_HOOKED 1'
    echo 'end'
    if [ -n "$fremove" ]; then
        echo 'set -l _tfdoctor_new'
        printf 'for _tfdoctor_d in %s (string split : -- "$LD_LIBRARY_PATH")\n' \
            "$(printf '%s' "$prepend" | tr ':' '\n' | while IFS= read -r d; do [ -n "$d" ] && printf '%s ' "$(fq "$d")"; done)"
        echo '    if test -n "$_tfdoctor_d"; and not contains -- $_tfdoctor_d $_tfdoctor_new'
        printf '        if not contains -- $_tfdoctor_d%s; or contains -- $_tfdoctor_d %s\n' "$fremove" \
            "$(printf '%s' "$prepend" | tr ':' '\n' | while IFS= read -r d; do [ -n "$d" ] && printf '%s ' "$(fq "$d")"; done)''"
        echo '            set -a _tfdoctor_new $_tfdoctor_d'
        echo '        end'
        echo '    end'
        echo 'end'
        echo 'if test (count $_tfdoctor_new) -gt 0; set -gx LD_LIBRARY_PATH (string join : -- $_tfdoctor_new)'
        echo 'else; set -e LD_LIBRARY_PATH; end'
    fi
    if [ -n "$xla" ]; then
        printf 'set -gx XLA_FLAGS (string trim -- "$XLA_FLAGS "%s)\n' "$(fq "--xla_gpu_cuda_data_dir=$xla")"
    fi
    if [ -n "$cvd" ]; then
        if [ -n "$cvd_to" ]; then set_cvd="set -gx CUDA_VISIBLE_DEVICES $(fq "$cvd_to")"
        else set_cvd="set -e CUDA_VISIBLE_DEVICES"; fi
        printf 'if set -q CUDA_VISIBLE_DEVICES; and test "$CUDA_VISIBLE_DEVICES" = %s; %s; end\n' \
            "$(fq "$cvd_from")" "$set_cvd"
    fi
    if [ -n "$growth" ]; then
        echo "set -gx TF_FORCE_GPU_ALLOW_GROWTH true"
    fi
    echo 'functions -e _tfdoctor_venv_deactivate; functions -c deactivate _tfdoctor_venv_deactivate'
    echo 'function deactivate -d "Exit the virtual environment; tfdoctor puts its variables back"'
    echo '    _tfdoctor_venv_deactivate $argv'
    echo "    for _tfdoctor_v in $vars"
    echo '        set -l _tfdoctor_o _TFDOCTOR_OLD_$_tfdoctor_v'
    echo '        if set -q $_tfdoctor_o; set -gx $_tfdoctor_v $$_tfdoctor_o; else; set -e $_tfdoctor_v; end'
    echo '        set -e $_tfdoctor_o'
    echo '    end'
    echo '    set -e _TFDOCTOR_HOOKED'
    echo '    test "$argv[1]" = nondestructive; or functions -e _tfdoctor_venv_deactivate'
    echo 'end'
}

csh_block() {  # bin/activate.csh: save, change, and a wrapped `deactivate` alias (tcsh)
    echo 'if (! $?_TFDOCTOR_HOOKED) then'
    for v in $vars; do
        # block form: a one-line csh `if` substitutes its command's variables even when false
        printf '    if ($?%s) then\n        setenv _TFDOCTOR_OLD_%s "$%s"\n    endif\n' "$v" "$v" "$v"
    done
    echo '    setenv _TFDOCTOR_HOOKED 1'
    echo 'endif'
    if [ -n "$remove" ]; then
        # The filtering runs in sh (csh has no way to split on ":" without splitting on
        # blanks too); its script travels in the environment, quoted once for csh.
        filter="set -f; IFS=:; o=$(q "$prepend"); for d in \${LD_LIBRARY_PATH-}; do case \"\$d\" in ''|$remove) ;; *) o=\"\${o:+\$o:}\$d\" ;; esac; done; printf %s \"\$o\""
        printf 'setenv _TFDOCTOR_SH %s\n' "$(q "$filter")"
        cat <<'EOF_CSH'
set _tfdoctor_new = "`/bin/sh -c 'eval "'"$_TFDOCTOR_SH"'"'`"
if ("$_tfdoctor_new" == "") then
    unsetenv LD_LIBRARY_PATH
else
    setenv LD_LIBRARY_PATH "$_tfdoctor_new"
endif
unset _tfdoctor_new
unsetenv _TFDOCTOR_SH
EOF_CSH
    fi
    if [ -n "$xla" ]; then
        printf 'if ($?XLA_FLAGS) then\n    setenv XLA_FLAGS "$XLA_FLAGS "%s\nelse\n    setenv XLA_FLAGS %s\nendif\n' \
            "$(q "--xla_gpu_cuda_data_dir=$xla")" "$(q "--xla_gpu_cuda_data_dir=$xla")"
    fi
    if [ -n "$cvd" ]; then
        if [ -n "$cvd_to" ]; then set_cvd="setenv CUDA_VISIBLE_DEVICES $(q "$cvd_to")"
        else set_cvd="unsetenv CUDA_VISIBLE_DEVICES"; fi
        printf 'if ($?CUDA_VISIBLE_DEVICES) then\n    if ("$CUDA_VISIBLE_DEVICES" == %s) %s\nendif\n' \
            "$(q "$cvd_from")" "$set_cvd"
    fi
    if [ -n "$growth" ]; then
        echo "setenv TF_FORCE_GPU_ALLOW_GROWTH true"
    fi
    # The venv's `deactivate` is an alias, redefined each time activate.csh is sourced: keep it
    # under another name (tcsh re-reads an alias's text when it runs) and put ours in front.
    # A one-line csh `if` substitutes its command's variables even when false, so each restore
    # is `test ... && ...`, as in the venv's own alias.
    printf '%s\n' 'alias _tfdoctor_venv_deactivate "`alias deactivate`"'
    printf "alias deactivate '"
    for v in $vars; do
        printf 'test $?_TFDOCTOR_OLD_%s != 0 && setenv %s "$_TFDOCTOR_OLD_%s"; ' "$v" "$v" "$v"
        printf 'test $?_TFDOCTOR_OLD_%s = 0 && unsetenv %s; unsetenv _TFDOCTOR_OLD_%s; ' "$v" "$v" "$v"
    done
    printf 'unsetenv _TFDOCTOR_HOOKED; _tfdoctor_venv_deactivate \\!:*; '
    printf 'test "\\!:*" != "nondestructive" && unalias _tfdoctor_venv_deactivate'"'"'\n'
}

begin="# >>> tfdoctor activation hook >>>"
end="# <<< tfdoctor activation hook <<<"
note="# Written by \`tfdoctor fix\`; \`tfdoctor fix --undo\` restores the file as it was."

case "$mode" in
    venv)
        [ -f "$target" ] || { echo "activation-hook: $target is not a file" >&2; exit 1; }
        tmp="$target.tfdoctor-tmp"
        awk -v b="$begin" -v e="$end" '$0 == b {skip = 1} !skip {print} $0 == e {skip = 0}' \
            "$target" > "$tmp"
        { echo "$begin"; echo "$note"; save; body; wrap_deactivate; echo "$end"; } >> "$tmp"
        # cat keeps the file's inode and mode; only its bytes change.
        cat "$tmp" > "$target"
        rm -f "$tmp"
        for other in fish csh; do  # every activate script the venv has
            [ -f "$target.$other" ] || continue
            awk -v b="$begin" -v e="$end" '$0 == b {skip = 1} !skip {print} $0 == e {skip = 0}' \
                "$target.$other" > "$tmp"
            { echo "$begin"; echo "$note"; "${other}_block"; echo "$end"; } >> "$tmp"
            cat "$tmp" > "$target.$other"
            rm -f "$tmp"
        done
        ;;
    conda)
        mkdir -p "$target/etc/conda/activate.d" "$target/etc/conda/deactivate.d"
        { echo "$begin"; echo "$note"; save; body; echo "$end"; } \
            > "$target/etc/conda/activate.d/tfdoctor.sh"
        { echo "$begin"; echo "$note"; restore; echo "$end"; } \
            > "$target/etc/conda/deactivate.d/tfdoctor.sh"
        ;;
    preload)
        [ -n "$preload" ] && [ -n "$only_for" ] || {
            echo "activation-hook: preload needs --preload LIB and --only-for DIR" >&2; exit 2; }
        # Two files: the code, readable, in tfdoctor-preload.py beside the .pth; and the .pth, whose
        # one line (site.py executes lines that start with `import`) runs that file. exec, not
        # import: no __pycache__ is written, so an undo leaves nothing behind.
        code="${target%.pth}.py"
        case "$code" in *\'*|*\\*) echo "activation-hook: cannot preload from $code" >&2; exit 2 ;; esac
        {
            echo "# >>> tfdoctor start-up preload >>>"
            echo "$note"
            echo "# Run at interpreter start-up by the .pth file beside it (site.py). It adds a finder that,"
            echo "# when \`tensorflow\` is first imported, loads the CUDA libraries TensorFlow's RUNPATH misses"
            echo "# (dependencies first, RTLD_GLOBAL), only while the TensorFlow they were chosen for is"
            echo "# installed (its .dist-info). A library that is missing is skipped."
            echo "import os"
            echo "import sys"
            echo ""
            echo "LIBRARIES = ($preload)"
            echo "ONLY_FOR = $only_for"
            echo ""
            echo ""
            echo "class TfdoctorPreload:"
            echo "    @staticmethod"
            echo "    def find_spec(name, path=None, target=None):"
            echo "        if name == 'tensorflow' and TfdoctorPreload in sys.meta_path:"
            echo "            sys.meta_path.remove(TfdoctorPreload)"
            echo "            if os.path.isdir(ONLY_FOR):"
            echo "                import ctypes"
            echo "                for library in LIBRARIES:"
            echo "                    try:"
            echo "                        ctypes.CDLL(library, mode=ctypes.RTLD_GLOBAL)"
            echo "                    except OSError:"
            echo "                        pass"
            echo "        return None"
            echo ""
            echo ""
            echo "sys.meta_path.insert(0, TfdoctorPreload)"
            echo "# <<< tfdoctor start-up preload <<<"
        } > "$code.tfdoctor-tmp"
        {
            echo "# >>> tfdoctor start-up preload >>>"
            echo "$note"
            echo "# Runs $code (readable there)."
            printf '%s\n' "import os; os.path.isfile('$code') and exec(compile(open('$code').read(), '$code', 'exec'), {'__name__': 'tfdoctor_preload'})"
            echo "# <<< tfdoctor start-up preload <<<"
        } > "$target.tfdoctor-tmp"
        mv -f "$code.tfdoctor-tmp" "$code"
        mv -f "$target.tfdoctor-tmp" "$target"
        ;;
    *) echo "activation-hook: MODE must be venv, conda or preload" >&2; exit 2 ;;
esac
