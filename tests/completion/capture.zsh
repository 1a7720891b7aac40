#!/usr/bin/env zsh
# Prints the completions zsh offers for the command line "$1" (the words before TAB) with the
# completion functions of directory $2, from an interactive zsh on a pseudo terminal. After
# zsh-capture-completion (Valodim, MIT): compadd is replaced by one that prints its words.
zmodload zsh/zpty || exit 3
zpty z zsh -f -i
local line
setopt rcquotes
() {
    zpty -w z source $1
    repeat 4; do
        zpty -r z line
        [[ $line == ok* ]] && return
    done
    echo 'error initializing.' >&2
    exit 2
} =( <<< "
PROMPT=
fpath=($2 \$fpath)
autoload -U compinit
compinit -u -d ${TMPDIR:-/tmp}/hl-zcompdump-$$
bindkey '^M' undefined
bindkey '^J' undefined
bindkey '^I' complete-word
null-line () { echo -E - \$'\\0' }
compprefuncs=( null-line )
comppostfuncs=( null-line exit )
zstyle ':completion:*' list-grouped false
zstyle ':completion:*' insert-tab false
zstyle ':completion:*' list-separator ''
zmodload zsh/zutil
compadd () {
    if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then
        builtin compadd \"\$@\"
        return \$?
    fi
    typeset -a __hits __dscr __tmp
    builtin compadd -A __hits \"\$@\"
    [[ -n \$__hits ]] || return
    for i in {1..\$#__hits}; do
        echo -E - \$__hits[\$i]
    done
}
echo ok")
zpty -w z "$1"$'\t'
integer tog=0
while zpty -r z; do :; done | while IFS= read -r line; do
    if [[ $line == *$'\0\r' ]]; then
        (( tog++ )) && exit 0 || continue
    fi
    (( tog )) && echo -E - ${line%$'\r'}
done
exit 2
