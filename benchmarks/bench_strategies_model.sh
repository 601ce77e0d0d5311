#!/bin/sh
# The composed methods with the embedded Gemma 3 270M, resumable (each eval resumes its folder).
#   flock /tmp/tablereason-bench.lock timeout 1200 sh benchmarks/bench_strategies_model.sh tabfact 3 runs/strategies
#   ... bench_strategies_model.sh wikitq 50 runs/strategies "single self_consistency"
# The optional fourth argument names the methods to run (default: all four, in this order).
# Then bench_strategies_table.py for the table. Mix-SC's symbolic paths: Program-of-Thought
# on TabFact (a program can set a verdict), Text-to-SQL on WikiTQ (shorter replies).
set -u
dataset=$1; limit=$2; out=$3
methods=${4:-single self_consistency table_critic mix_sc}
symbolic=program_of_thought
[ "$dataset" = wikitq ] && symbolic=text_to_sql
run() {  # name, then method options
  name=$1; shift
  .venv/bin/python -m tablereason.cli eval --dataset "$dataset" --split test \
    --data-dir ../shared/data --model local --limit "$limit" --concurrency 1 \
    --out "$out/$dataset/$name" --quiet "$@"
}
for name in $methods; do
  case $name in
    single) run single --method chain_of_table ;;
    self_consistency) run self_consistency --method self_consistency --option k=5 \
      --option temperature=0.7 --option workers=1 ;;
    table_critic) run table_critic --method table_critic --option rounds=2 ;;
    mix_sc) run mix_sc --method mix_sc --option k=5 --option temperature=0.7 --option workers=1 \
      --option symbolic=$symbolic ;;
    *) echo "unknown method: $name (single, self_consistency, table_critic, mix_sc)" >&2; exit 2 ;;
  esac
done
