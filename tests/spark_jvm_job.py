"""Queries run through the JVM data source and the Python one in one Spark session, for
tests/test_spark_jvm.py (a process of its own: the jar must be on the classpath from the JVM's
start, and with it ``format("kafkalog")`` is the JVM source for the rest of that JVM).

``python spark_jvm_job.py <master> <mode> <json args>`` prints one JSON line of results. The
Python source runs under the name ``kafkalog_python`` here (Spark refuses a Python source under
a name a JVM source has)."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import sys
import traceback

from pyspark.sql import SparkSession

from kafkalog.spark import jar
from kafkalog.spark import jvm as jvm_source
from kafkalog.spark.source import KafkaLogDataSource


class PythonSource(KafkaLogDataSource):
    @classmethod
    def name(cls) -> str:
        return "kafkalog_python"


def plain(v):
    if isinstance(v, (bytes, bytearray)):
        return "b:" + bytes(v).hex()
    if isinstance(v, dt.datetime):
        return "t:" + v.isoformat()
    if isinstance(v, (dt.date, dt.time, dt.timedelta, decimal.Decimal)):
        return f"{type(v).__name__}:{v}"
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))}
    if hasattr(v, "asDict"):
        return {k: plain(x) for k, x in v.asDict().items()}
    return v


def rows(df) -> list:
    try:
        return sorted(json.dumps([plain(v) for v in r], sort_keys=True) for r in df.collect())
    except ValueError as e:
        # A timestamp Python's datetime cannot hold (before year 1 in the local zone): the rows
        # as Spark's JSON of them instead, made in the JVM.
        if "out of range" not in str(e):
            raise
        return sorted(r[0] for r in df.selectExpr("to_json(struct(*)) AS j").collect())


def frame(spark, fmt: str, case: dict):
    reader = spark.read.format(fmt)
    if case.get("schema"):
        reader = reader.schema(case["schema"])
    for k, v in case.get("options", {}).items():
        reader = reader.option(k, v)
    paths = case["paths"]
    df = (
        reader.load(paths[0])
        if len(paths) == 1
        else reader.option("paths", json.dumps(paths)).load()
    )
    if case.get("where"):
        df = df.where(case["where"])
    if case.get("select"):
        df = df.selectExpr(*case["select"])
    return df


def error_of(f) -> str | None:
    try:
        f()
    except Exception as e:  # Spark's exceptions carry the cause's text
        return str(e)
    return None


def append(part: str, n: int) -> None:
    """``n`` new records at the end of a partition directory, in a new segment (as a broker
    rolls one); a partition that is not there yet starts at offset 0."""
    import shutil
    import warnings
    from pathlib import Path

    import pyarrow as pa

    import kafkalog

    where = Path(part)
    end = 0
    if where.exists() and any(where.glob("*.log")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", kafkalog.KafkaLogWarning)
            end = kafkalog.read(where).read_all()["offset"].to_pylist()[-1] + 1
    records = pa.table(
        {
            "key": [f"k{i}".encode() for i in range(end, end + n)],
            "value": [f"v{i}".encode() for i in range(end, end + n)],
            "timestamp": pa.array(
                [1_800_000_000_000 + i for i in range(end, end + n)], pa.timestamp("ms")
            ),
        }
    )
    staging = where.parent / f".new-{where.name}-{end}"
    kafkalog.write(staging / where.name, records, base_offset=end)
    where.mkdir(exist_ok=True)
    for f in (staging / where.name).iterdir():
        shutil.move(str(f), where / f.name)
    shutil.rmtree(staging)


def stream(spark, step: dict) -> dict:
    """A ``Trigger.AvailableNow`` query to its end: each micro-batch's rows (in order), and the
    source's description in the query's progress (which implementation streamed)."""
    batches: dict[int, list] = {}

    def collect(df, batch_id: int) -> None:
        batches[batch_id] = rows(df)

    reader = spark.readStream.format(step["format"])
    for k, v in step.get("options", {}).items():
        reader = reader.option(k, v)
    try:
        query = (
            reader.load(step["path"])
            .writeStream.foreachBatch(collect)
            .option("checkpointLocation", step["checkpoint"])
            .trigger(availableNow=True)
            .start()
        )
    except Exception as e:  # options refused before the query runs
        return {"batches": [], "sources": [], "error": str(e)}
    try:
        query.awaitTermination(300)
    except Exception:  # a failed query: its exception() says why
        pass
    error = query.exception()
    query.stop()
    return {
        "batches": [batches[k] for k in sorted(batches)],
        "sources": sorted({s["description"] for p in query.recentProgress for s in p["sources"]}),
        "error": None if error is None else str(error),
    }


def main() -> None:
    master, mode, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    # The one-line helper (it sets spark.jars to kafkalog.spark.jar()).
    spark = jvm_source.session(
        SparkSession.builder.master(master).appName("kafkalog-jvm-tests"),
        **{
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.session.timeZone": "America/New_York",
            "spark.executor.memory": "512m",
            "spark.task.maxFailures": "1",
            "spark.python.authenticate.socketTimeout": "120s",
        },
    )
    assert spark.conf.get("spark.jars") == jar() and jvm_source.in_session(spark)
    spark.sparkContext.setLogLevel("ERROR")
    spark.dataSource.register(PythonSource)
    out: dict = {}
    if mode == "compare":
        for case in args:
            try:
                jdf = frame(spark, "kafkalog", case)
                jvm = rows(jdf)
                pdf = frame(spark, "kafkalog_python", case)
                py = rows(pdf)
                out[case["name"]] = {"equal": jvm == py, "rows": len(jvm), "py_rows": len(py)}
                if "value" in jdf.columns and hasattr(jdf.schema["value"].dataType, "names"):
                    # The typed value's fields, as each source gives them.
                    out[case["name"]]["value_fields"] = [
                        jdf.schema["value"].dataType.names,
                        pdf.schema["value"].dataType.names,
                    ]
                if jvm != py:
                    only_jvm = sorted(set(jvm) - set(py))[:3]
                    only_py = sorted(set(py) - set(jvm))[:3]
                    out[case["name"]]["diff"] = {"jvm": only_jvm, "python": only_py}
            except Exception:
                out[case["name"]] = {"error": traceback.format_exc()[:2500]}
    elif mode == "errors":
        for case in args:
            jvm = error_of(lambda c=case: frame(spark, "kafkalog", c).collect())
            py = error_of(lambda c=case: frame(spark, "kafkalog_python", c).collect())
            out[case["name"]] = {"jvm": jvm, "python": py}
        # The JVM is still up and reading after every failure.
        out["after"] = spark.read.format("kafkalog").load(args[0]["alive"]).count()
    elif mode == "plan":
        for case in args:
            df = frame(spark, "kafkalog", case)
            out[case["name"]] = {
                "partitions": df.rdd.getNumPartitions(),
                "explain": df._jdf.queryExecution().executedPlan().toString(),
                "rows": df.count(),
                "count_explain": df.selectExpr("count(*)")
                ._jdf.queryExecution()
                .executedPlan()
                .toString(),
            }
    elif mode == "metrics":
        # Spark's input metrics of the scan's stage (its UI's and event log's "Input").
        spark.sparkContext.setJobGroup("metrics", "metrics")
        df = spark.read.format("kafkalog").options(**args.get("options", {})).load(args["path"])
        out["rows"] = df.count()
        out["sum"] = df.selectExpr("sum(length(value)) AS s").collect()[0]["s"]
        jsc = spark.sparkContext._jsc.sc()
        jsc.listenerBus().waitUntilEmpty()
        jvm = spark.sparkContext._jvm
        none = spark.sparkContext._gateway.new_array(jvm.double, 0)
        stages = jsc.statusStore().stageList(
            jvm.java.util.ArrayList(), False, False, none, jvm.java.util.ArrayList()
        )
        out["stages"] = [
            {"input_bytes": s.inputBytes(), "input_records": s.inputRecords(), "name": s.name()}
            for s in (stages.apply(i) for i in range(stages.size()))
        ]
    elif mode == "stream":
        # Steps in order: streaming queries (by either source) and appends between them.
        for step in args:
            if step["do"] == "append":
                append(step["path"], step["n"])
            else:
                out[step["label"]] = stream(spark, step)
    elif mode == "carry":
        # Typed reads written by Spark to Parquet and ORC with its default settings, and read
        # back, through both sources.
        for case in args["cases"]:
            for fmt in ("kafkalog", "kafkalog_python"):
                got: dict = {}
                try:
                    df = frame(spark, fmt, case)
                    got["schema"] = df.schema.simpleString()
                    got["rows"] = rows(df)
                    for kind in ("parquet", "orc"):
                        where = f"{args['out']}/{case['name']}-{fmt}.{kind}"
                        df.write.format(kind).save(where)
                        back = spark.read.format(kind).load(where)
                        got[kind] = rows(back) == got["rows"]
                    if case["options"].get("valueFormat") == "avro":
                        # Written back as Avro with the registered schema (the typed write),
                        # then read again: the same rows.
                        where = f"{args['out']}/{case['name']}-{fmt}-log"
                        kv = df.select("key", "value", "topic", "partition")
                        kv.write.format(fmt).options(**case["options"]).mode("append").save(where)
                        topic = case["paths"][0].rsplit("/", 1)[1].rsplit("-", 1)[0]
                        again = frame(spark, fmt, {**case, "paths": [f"{where}/{topic}-0"]})
                        kv_again = again.select("key", "value", "topic", "partition")
                        got["written_back"] = rows(kv_again) == rows(kv)
                except Exception:
                    got["error"] = traceback.format_exc()[-2500:]
                out[f"{case['name']}:{fmt}"] = got
    elif mode == "nopython":
        # Spark's Python workers cannot start (PYSPARK_PYTHON names no program): the JVM source
        # reads typed records all the same, the Python source cannot.
        case = args["case"]
        df = frame(spark, "kafkalog", case)
        out["rows"] = len(rows(df))
        out["sum"] = df.selectExpr("sum(value.id)").collect()[0][0]
        out["plan"] = df._jdf.queryExecution().executedPlan().toString()
        out["python"] = error_of(lambda: frame(spark, "kafkalog_python", case).collect())
    elif mode == "delegate":
        # Writes through the name (the Python source's, handed on) and a streaming read (the
        # JVM source's own).
        df = spark.read.format("kafkalog").option("subscribe", "orders").load(args["src"])
        df.write.format("kafkalog").mode("append").save(args["out"])
        back = spark.read.format("kafkalog").load(args["out"])
        kv = ["topic", "partition", "key", "value", "timestamp"]
        out["written_equal"] = rows(df.select(*kv)) == rows(back.select(*kv))
        out["written"] = back.count()
        query = (
            spark.readStream.format("kafkalog")
            .option("startingOffsets", "earliest")
            .load(args["src"])
            .selectExpr("topic", "partition", "offset")
            .writeStream.format("parquet")
            .option("path", args["sink"])
            .option("checkpointLocation", args["checkpoint"])
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(300)
        out["stream_error"] = None if query.exception() is None else str(query.exception())
        out["stream_sources"] = sorted(
            {s["description"] for p in query.recentProgress for s in p["sources"]}
        )
        out["streamed"] = spark.read.parquet(args["sink"]).count()
        out["all"] = spark.read.format("kafkalog").load(args["src"]).count()
    print(json.dumps(out))
    spark.stop()


if __name__ == "__main__":
    main()
