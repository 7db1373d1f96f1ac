"""The bench's class-data archive: class lists merged, a real `java -Xshare:dump`, and a JVM that maps it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pyscheduler.deploy import cds

JAVA = shutil.which("java") or "java"  # make test runs with a JDK on the PATH (it builds the plugin)


def test_lists_are_merged_once_each_in_order_of_first_appearance(tmp_path: Path) -> None:
    a, b = tmp_path / "am.classlist", tmp_path / "map.classlist"
    a.write_text("# NOTE: generated\n#\njava/lang/Object\njava/lang/String\n", encoding="utf-8")
    b.write_text("java/lang/String\njava/util/List\n\n", encoding="utf-8")
    out = tmp_path / "all.classlist"
    assert cds.merge_lists([a, b], out) == 3
    assert out.read_text(encoding="utf-8").splitlines() == [
        "java/lang/Object",
        "java/lang/String",
        "java/util/List",
    ]


def test_a_list_cut_while_its_jvm_was_killed_loses_only_its_cut_line(tmp_path: Path) -> None:
    cut = tmp_path / "map.pid7.classlist"
    cut.write_text("java/lang/Object\n@lambda-proxy java/lang/Str", encoding="utf-8")  # killed mid-line
    whole = tmp_path / "map.pid8.classlist"
    whole.write_text("java/util/List\n", encoding="utf-8")
    out = tmp_path / "all.classlist"
    assert cds.merge_lists([cut, whole], out) == 2
    assert out.read_text(encoding="utf-8").splitlines() == ["java/lang/Object", "java/util/List"]


def test_lists_without_classes_are_an_error_naming_them(tmp_path: Path) -> None:
    empty = tmp_path / "reduce.classlist"
    empty.write_text("# NOTE: generated\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"reduce\.classlist"):
        cds.merge_lists([empty], tmp_path / "all.classlist")


def test_every_kind_of_jvm_writes_its_own_list_on_the_fixed_class_path(tmp_path: Path) -> None:
    opts = cds.list_opts(["/x/a.jar", "/x/b.jar"], Path("/c/conf"), tmp_path)
    assert sorted(opts) == sorted(cds.KINDS)
    for kind, o in opts.items():
        assert o.startswith("-cp /x/a.jar:/x/b.jar:/c/conf ")
        assert o.endswith(f"-XX:DumpLoadedClassList={tmp_path / f'{kind}.%p.classlist'}")


def test_jvms_running_at_once_write_lists_of_their_own(tmp_path: Path) -> None:
    opts = cds.list_opts([], tmp_path / "conf", tmp_path)["map"].split()
    jvms = [subprocess.Popen([JAVA, *opts, "-version"], stderr=subprocess.DEVNULL) for _ in range(2)]
    pids = {f"map.pid{j.pid}.classlist" for j in jvms}
    assert all(j.wait(timeout=120) == 0 for j in jvms)
    assert {f.name for f in cds.lists_of(tmp_path, "map")} == pids
    assert cds.lists_of(tmp_path, "reduce") == []
    for f in cds.lists_of(tmp_path, "map"):
        assert "java/lang/Object" in f.read_text(encoding="utf-8").split()


def test_a_jvm_runs_on_the_dumped_jars_with_its_own_conf_dir_last(tmp_path: Path) -> None:
    archive = cds.Archive(tmp_path / "jvms.jsa", ("/x/a.jar", "/x/b.jar"))
    assert archive.jvm_opts(Path("/run/1/conf")) == (
        f"-cp /x/a.jar:/x/b.jar:/run/1/conf -XX:SharedArchiveFile={tmp_path / 'jvms.jsa'}"
    )


def test_a_real_dump_is_mapped_by_a_jvm_whose_class_path_extends_it(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "Hello.java").write_text(
        'public class Hello { public static void main(String[] a) { System.out.println("hi"); } }\n',
        encoding="utf-8",
    )
    subprocess.run([str(Path(JAVA).with_name("javac")), "-d", str(src), str(src / "Hello.java")], check=True)
    jar = tmp_path / "hello.jar"
    subprocess.run(
        [str(Path(JAVA).with_name("jar")), "cf", str(jar), "-C", str(src), "Hello.class"], check=True
    )
    opts = cds.list_opts([str(jar)], tmp_path / "conf", tmp_path)["map"].split()
    subprocess.run([JAVA, *opts, "Hello"], check=True, capture_output=True)
    [listed] = cds.lists_of(tmp_path, "map")
    assert "Hello" in listed.read_text(encoding="utf-8").split()

    said: list[str] = []
    archive = cds.dump(JAVA, [str(jar)], [listed], tmp_path / "jvms.jsa", said.append)
    assert archive.path.exists() and "jvms.jsa" in said[0]
    conf = tmp_path / "conf"
    conf.mkdir()
    run = subprocess.run(
        [JAVA, *archive.jvm_opts(conf).split(), "-Xshare:on", "-Xlog:class+load=info", "Hello"],
        check=True,
        capture_output=True,
        text=True,
    )
    # -Xshare:on fails the JVM when the archive cannot be mapped; the app class comes from it.
    assert any("Hello source: shared objects file" in line for line in run.stdout.splitlines())


def test_a_failed_dump_names_java_s_complaint(tmp_path: Path) -> None:
    listed = tmp_path / "map.classlist"
    listed.write_text("java/lang/Object\n", encoding="utf-8")
    taken = Path("/proc/dollymp-test.jsa")  # java cannot create a file in /proc
    with pytest.raises(RuntimeError, match="java -Xshare:dump failed"):
        cds.dump(JAVA, [str(tmp_path / "absent.jar")], [listed], taken, lambda _m: None)
