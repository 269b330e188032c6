# shellcheck shell=bash
# split_words TEXT: the words TEXT makes as a POSIX shell splits a command's words, with nothing expanded or run.
# Blanks (and newlines) separate words; '…' keeps every character; "…" keeps every character but a backslash before
# $ ` " \ or a newline, which keeps only that character (backslash-newline keeps nothing); outside quotes a
# backslash keeps the next character as it is (backslash-newline keeps nothing, a last backslash stays). $, `, ~ and
# glob characters stay as typed; a # that starts a word starts a comment to the end of its line, as in the shell. Sets the array `words`; on an unterminated quote returns 1 with `split_error` saying
# which quote.
split_words() {
  local text=$1 word='' quote='' c next i=0 n=${#1} started=0
  words=()
  split_error=''
  while ((i < n)); do
    c=${text:i:1}
    if [ "$quote" = "'" ]; then
      if [ "$c" = "'" ]; then quote=''; else word+=$c; fi
    elif [ "$quote" = '"' ]; then
      if [ "$c" = '"' ]; then
        quote=''
      elif [ "$c" = '\' ] && ((i + 1 < n)); then
        next=${text:i+1:1}
        case $next in
          '$' | '`' | '"' | '\')
            word+=$next
            i=$((i + 1))
            ;;
          $'\n') i=$((i + 1)) ;;
          *) word+=$c ;;
        esac
      else
        word+=$c
      fi
    else
      case $c in
        ' ' | $'\t' | $'\n')
          if ((started)); then words+=("$word"); fi
          word=''
          started=0
          ;;
        "'" | '"')
          quote=$c
          started=1
          ;;
        '#')
          # At the start of a word, a comment to the end of the line (as the shell reads it); inside one, a character.
          if ((started)); then
            word+=$c
          else
            while ((i + 1 < n)) && [ "${text:i+1:1}" != $'\n' ]; do i=$((i + 1)); done
          fi
          ;;
        '\')
          if ((i + 1 == n)); then
            word+=$c
            started=1
          else
            next=${text:i+1:1}
            i=$((i + 1))
            if [ "$next" != $'\n' ]; then
              word+=$next
              started=1
            fi
          fi
          ;;
        *)
          word+=$c
          started=1
          ;;
      esac
    fi
    i=$((i + 1))
  done
  if [ -n "$quote" ]; then
    split_error="an unterminated $quote quote"
    return 1
  fi
  if ((started)); then words+=("$word"); fi
  return 0
}
