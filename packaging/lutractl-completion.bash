
# Parameter names from list_param of the ctld this command line talks to (--node or --socket
# and its credentials; a hostlist is not asked: one node's names stand for all). Quick: 2 s.
_lutractl_params() {
    "$1" "${@:2}" --timeout 2s list_param 2>/dev/null
}

_lutractl() {
    # Words from the line itself: COMP_WORDS splits host:port and name=value apart.
    local line=${COMP_LINE:0:COMP_POINT}
    local -a words
    read -ra words <<<"$line"
    if [[ -z $line || $line == *[[:space:]] ]]; then
        words+=("")
    fi
    local cur=${words[-1]} prev="" command="" i word
    ((${#words[@]} >= 2)) && prev=${words[-2]}
    local -a connection=()
    for ((i = 1; i < ${#words[@]} - 1; i++)); do
        word=${words[i]}
        if [[ -z $command ]]; then
            if [[ " $_lutractl_valued " == *" $word "* ]]; then
                case $word in
                --node | --socket | --token-file | --tls-ca | --tls-cert | --tls-key)
                    connection+=("$word" "${words[i + 1]}")
                    ;;
                esac
                ((i++))
            elif [[ $word != -* ]]; then
                command=$word
            fi
        fi
    done

    local -a candidates=()
    local valued=$_lutractl_valued
    [[ -n $command ]] && valued=$(_lutractl_command_valued "$command")
    if ((${#words[@]} >= 3)) && [[ " $valued " == *" $prev "* ]]; then
        # The value of an option: files where the option names one, else nothing to offer.
        case $prev in
        --socket | --token-file | --tls-ca | --tls-cert | --tls-key | -f | --file)
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            ;;
        *) COMPREPLY=() ;;
        esac
        return 0
    fi
    if [[ -z $command ]]; then
        if [[ $cur == -* ]]; then
            read -ra candidates <<<"$_lutractl_options"
        else
            read -ra candidates <<<"$_lutractl_commands"
        fi
    elif [[ $cur == -* ]]; then
        read -ra candidates <<<"$(_lutractl_command_options "$command")"
    else
        case $command in
        get_param | list_param)
            mapfile -t candidates < <(_lutractl_params "${words[0]}" "${connection[@]}")
            ;;
        set_param)
            # NAME=VALUE: complete the name up to its '=', then the value is the user's.
            if [[ $cur != *=* ]]; then
                mapfile -t candidates < <(_lutractl_params "${words[0]}" "${connection[@]}" |
                    sed 's/$/=/')
                compopt -o nospace 2>/dev/null
            fi
            ;;
        put-profile)
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            return 0
            ;;
        esac
    fi
    mapfile -t COMPREPLY < <(compgen -W "${candidates[*]}" -- "$cur")
    # bash replaces only the part of the word after its last ':' or '=' (COMP_WORDBREAKS).
    local broken=${cur%"${cur##*[:=]}"}
    if [[ -n $broken ]]; then
        for i in "${!COMPREPLY[@]}"; do
            COMPREPLY[i]=${COMPREPLY[i]#"$broken"}
        done
    fi
}
complete -F _lutractl lutractl
