#!/bin/bash
# socat SYSTEM: server answer for "peer" servers: prints "REPLY CLIENT-IP". socat gives the
# client as SOCAT_PEERADDR, for the dual-stack socket in full IPv6 form
# ([0000:...:ffff:a9fe:0101] for 169.254.1.1): print IPv4 dotted and IPv6 as RFC 5952 text.
a=${SOCAT_PEERADDR#[}
a=${a%]}
if [[ $a == *:*:*:*:*:*:*:* && $a != *::* ]]; then
  IFS=: read -ra w <<<"$a"
  if [[ ${w[0]}${w[1]}${w[2]}${w[3]}${w[4]} == 00000000000000000000 && ${w[5],,} == ffff ]]; then
    a="$((16#${w[6]} >> 8)).$((16#${w[6]} & 255)).$((16#${w[7]} >> 8)).$((16#${w[7]} & 255))"
  else
    for i in 0 1 2 3 4 5 6 7; do printf -v 'w[i]' %x "$((16#${w[i]}))"; done
    best=-1 bestlen=0 i=0
    while ((i < 8)); do
      if [[ ${w[i]} == 0 ]]; then
        j=$i
        while ((j < 8)) && [[ ${w[j]} == 0 ]]; do j=$((j + 1)); done
        if ((j - i > bestlen && j - i >= 2)); then best=$i bestlen=$((j - i)); fi
        i=$j
      else
        i=$((i + 1))
      fi
    done
    if ((best < 0)); then
      a=$(IFS=:; echo "${w[*]}")
    else
      l=$(IFS=:; echo "${w[*]:0:best}")
      r=$(IFS=:; echo "${w[*]:best+bestlen}")
      a="$l::$r"
    fi
  fi
fi
echo "$1 $a"
