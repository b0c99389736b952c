# The merge a user would script instead of SnapshotSync, in jq: a plain baseline for bench/run.py.
# Groups the records of every snapshot given by id and keeps, for each id, the one with the
# newest lastModified (records without one count as oldest). No vectors, no conflicts, no store.
#
#   jq -c -n -f bench/baselines/naive_merge.jq DIR/*.json > OUT
{records: ([inputs.records[]] | group_by(.id) | map(max_by(.lastModified // "")))}
