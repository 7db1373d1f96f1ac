"""SparkOnYarnIT's PySpark application: SumJob's two answers, computed by Python workers on the executors.

The sum of 1..n over `slices` tasks and a word count through a shuffle (reduceByKey), printed by the driver
on stdout as `SUM=` and `WORDS=` in SumJob's format, so that the test checks both the same way; then
`PYTHON_CONTAINERS=`, the YARN containers whose Python workers ran the sum's tasks (each worker's
CONTAINER_ID, which the NodeManager sets in the executor's environment and the worker inherits), and
`PYSPARK=`, the version of the pyspark package the driver imported.

    spark-submit --master yarn sum_words.py N SLICES
"""

from __future__ import annotations

import os
import sys
from operator import add

import pyspark
from pyspark import SparkConf, SparkContext


def block_sum(i: int, n: int, slices: int) -> tuple[int, str]:
    """The sum of block i of 1..n, and the container whose Python worker computed it."""
    lo = i * n // slices + 1
    hi = (i + 1) * n // slices
    return sum(range(lo, hi + 1)), os.environ.get("CONTAINER_ID", "none")


def word(i: int) -> str:
    """SumJob's words: clone and yarn 1000 times each, dolly and spark 500 each in 3000."""
    if i % 3 == 0:
        return "clone"
    if i % 3 == 1:
        return "yarn"
    return "dolly" if i % 2 == 0 else "spark"


def main(argv: list[str]) -> None:
    n, slices = int(argv[1]), int(argv[2])
    sc = SparkContext(conf=SparkConf())
    try:
        parts = sc.parallelize(range(slices), slices).map(lambda i: block_sum(i, n, slices)).collect()
        words = sc.parallelize([word(i) for i in range(3000)], slices)
        counts = dict(words.map(lambda w: (w, 1)).reduceByKey(add).collect())
    finally:
        sc.stop()
    print(f"SUM={sum(s for s, _ in parts)}")
    print("WORDS={" + ", ".join(f"{w}={c}" for w, c in sorted(counts.items())) + "}")
    print("PYTHON_CONTAINERS=" + ",".join(sorted({c for _, c in parts})))
    print("PYSPARK=" + pyspark.__version__)
    sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv)
