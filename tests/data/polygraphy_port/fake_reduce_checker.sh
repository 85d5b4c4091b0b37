#!/bin/sh
# Stands in for Polygraphy's tests/tools/fake_reduce_checker.py (same arguments, output and exit codes):
# a check for `debug reduce` that "fails" while every --fail-node is in the candidate model.
#   fake_reduce_checker.sh MODEL --fail-node NAME... [--default-return-code N] [--fail-return-code N]
# The node names come from `parity inspect model` ($PARITY_BIN is the parity executable).
model=$1
shift
fail_nodes=""
default_code=0
fail_code=1
while [ $# -gt 0 ]; do
  case $1 in
    --fail-node) shift
      while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do fail_nodes="$fail_nodes $1"; shift; done ;;
    --default-return-code) default_code=$2; shift 2 ;;
    --default-return-code=*) default_code=${1#*=}; shift ;;
    --fail-return-code) fail_code=$2; shift 2 ;;
    --fail-return-code=*) fail_code=${1#*=}; shift ;;
    *) echo "fake_reduce_checker: unknown argument $1" >&2; exit 2 ;;
  esac
done
echo "Running fake_reduce_checker.py"
names=$("$PARITY_BIN" inspect model "$model" --show layers | sed -n 's/^ *Node [0-9]* *| \([^ ]*\) \[Op:.*/\1/p')
echo "$names"
for wanted in $fail_nodes; do
  found=no
  for name in $names; do [ "$name" = "$wanted" ] && found=yes; done
  [ $found = yes ] || exit "$default_code"
done
# Two messages, so that --fail-regex can tell them apart.
case " $(echo $names) " in
  *" onnx_graphsurgeon_node_1 "*) echo "REALLY BAD!" ;;
  *) echo "FOUND A BAD NODE!" ;;
esac
exit "$fail_code"
