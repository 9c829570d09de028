#!/usr/bin/env python3
"""ci_run.py - run one job of a CI file on this machine, for the e2e tests of
examples/ci (tests/e2e/ci.sh). Not a CI system: just enough of GitHub Actions
and GitLab CI to run the example files unchanged and see what they do.

  ci_run.py github WORKFLOW JOB CONTEXT_JSON
  ci_run.py gitlab CI_FILE JOB CONTEXT_JSON
  ci_run.py gitlab-api PORT_FILE STORE_JSON TOKEN   (a fake GitLab notes API)

CONTEXT_JSON holds what the CI system would provide, and where this runner
keeps what a real one would upload:
  github     the github context (event_name, sha, ref, repository, run_id,
             actor, server_url, event: {...}); GitHub jobs only
  secrets, vars   the secrets and variables contexts (GitHub)
  variables  predefined and project CI/CD variables (GitLab)
  repo       a git repository to check out (a clone of it at github.sha, or
             CI_COMMIT_SHA for GitLab)
  workdir    the directory the job runs in (created; must not exist)
  artifacts  the artifact store of the workflow run / pipeline
  out        where the runner writes result.json, steps/*.log, sarif/,
             comments.json (GitHub PR comments) and summary.md
  comments   the PR's comments, when they must outlive one run (a JSON file)
  roles      {role ARN: {env var: value}}: the credentials an AWS role gives
  timeout    seconds a step may take (default 600)

GitHub: run steps go to bash (`bash -e`, or `-eo pipefail` with shell: bash),
with ${{ }} expressions evaluated over github, env, vars, secrets, steps,
runner and job, and if: (success(), failure(), always(), cancelled(),
==, !=, &&, ||, !, contains, startsWith, endsWith, hashFiles, format...),
continue-on-error, outcome and conclusion, GITHUB_OUTPUT, GITHUB_ENV,
GITHUB_PATH and GITHUB_STEP_SUMMARY. uses: steps are emulated by the table
USES; any other action fails the run. GitLab: rules: if:, variables,
before_script, script, after_script, needs (artifacts), artifacts (paths,
when, reports), id_tokens; the job's script runs in one `bash -eo pipefail`.

result.json: {"job", "status": success|failure|skipped, "steps": [{"name",
"id", "outcome", "conclusion", "exit", "log", "outputs", "started",
"finished"}]} (times in seconds since the epoch). Exit status: 0 when the job
succeeded or was skipped, 1 when it failed, 2 when this runner cannot run it
(an unknown action, a bad expression): a test must never mistake that for a
verdict of the job.
"""
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

import yaml


class Unsupported(Exception):
    """The file uses something this runner does not emulate."""


# --- GitHub expressions -------------------------------------------------------

TOKEN = re.compile(
    r"\s*(?:(?P<num>-?\d+(?:\.\d+)?)|'(?P<str>(?:[^']|'')*)'|(?P<op>==|!=|<=|>=|&&|\|\||[<>!(),.\[\]*])"
    r"|(?P<id>[A-Za-z_][A-Za-z0-9_-]*))"
)


def tokenize(text):
    pos, out = 0, []
    text = text.strip()
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise Unsupported("cannot read the expression %r at %r" % (text, text[pos:]))
        pos = m.end()
        if m.group("num") is not None:
            out.append(("val", float(m.group("num"))))
        elif m.group("str") is not None:
            out.append(("val", m.group("str").replace("''", "'")))
        elif m.group("op"):
            out.append(("op", m.group("op")))
        else:
            word = m.group("id")
            if word in ("true", "false"):
                out.append(("val", word == "true"))
            elif word == "null":
                out.append(("val", None))
            else:
                out.append(("id", word))
    return out


def truthy(v):
    if isinstance(v, (list, dict)):
        return True
    if isinstance(v, float) and v != v:
        return False
    return v not in (False, 0, "", None)


def to_num(v):
    if v is None:
        return 0.0
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.strip()) if v.strip() else 0.0
        except ValueError:
            return float("nan")
    return float("nan")


def loose_eq(a, b):
    """GitHub's ==: strings compare ignoring case; other types as numbers."""
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()
    if type(a) is type(b) and not isinstance(a, (int, float)):
        return a == b
    return to_num(a) == to_num(b)


def to_str(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return str(int(v)) if v == int(v) else str(v)
    if isinstance(v, (dict, list)):
        return json.dumps(v, indent=2)
    return str(v)


class Expr:
    """A recursive-descent evaluator of one ${{ }} expression."""

    def __init__(self, text, ctx, funcs):
        self.toks = tokenize(text)
        self.i = 0
        self.ctx = ctx
        self.funcs = funcs
        self.text = text

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None)

    def take(self, op=None):
        t = self.peek()
        if op is not None and t != ("op", op):
            raise Unsupported("expected %r in %r" % (op, self.text))
        self.i += 1
        return t

    def run(self):
        v = self.or_()
        if self.i != len(self.toks):
            raise Unsupported("trailing tokens in %r" % self.text)
        return v

    def or_(self):
        v = self.and_()
        while self.peek() == ("op", "||"):
            self.take()
            r = self.and_()
            v = v if truthy(v) else r
        return v

    def and_(self):
        v = self.cmp()
        while self.peek() == ("op", "&&"):
            self.take()
            r = self.cmp()
            v = r if truthy(v) else v
        return v

    def cmp(self):
        v = self.unary()
        while self.peek()[0] == "op" and self.peek()[1] in ("==", "!=", "<", ">", "<=", ">="):
            op = self.take()[1]
            r = self.unary()
            if op == "==":
                v = loose_eq(v, r)
            elif op == "!=":
                v = not loose_eq(v, r)
            else:
                a, b = to_num(v), to_num(r)
                v = {"<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]
        return v

    def unary(self):
        if self.peek() == ("op", "!"):
            self.take()
            return not truthy(self.unary())
        return self.postfix()

    def postfix(self):
        kind, val = self.take()
        if kind == "val":
            v = val
        elif kind == "op" and val == "(":
            v = self.or_()
            self.take(")")
        elif kind == "id" and self.peek() == ("op", "("):
            self.take()
            args = []
            if self.peek() != ("op", ")"):
                args.append(self.or_())
                while self.peek() == ("op", ","):
                    self.take()
                    args.append(self.or_())
            self.take(")")
            if val.lower() not in self.funcs:
                raise Unsupported("the function %s() is not emulated" % val)
            v = self.funcs[val.lower()](*args)
        elif kind == "id":
            if val not in self.ctx:
                raise Unsupported("the context %r is not emulated" % val)
            v = self.ctx[val]
        else:
            raise Unsupported("unexpected %r in %r" % (val, self.text))
        while self.peek() in (("op", "."), ("op", "[")):
            if self.take()[1] == ".":
                k, name = self.take()
                if k != "id" and not (k == "op" and name == "*"):
                    raise Unsupported("bad property in %r" % self.text)
            else:
                name = self.or_()
                self.take("]")
            if isinstance(v, dict):
                key = to_str(name)
                # Property names are case-insensitive in GitHub's expressions.
                v = v[key] if key in v else next((x for k2, x in v.items() if k2.lower() == key.lower()), None)
            elif isinstance(v, list) and isinstance(name, float):
                v = v[int(name)] if 0 <= int(name) < len(v) else None
            else:
                v = None
        return v


# --- GitHub Actions -----------------------------------------------------------


def parse_kv_file(path):
    """GITHUB_OUTPUT / GITHUB_ENV: NAME=VALUE lines and NAME<<EOF heredocs."""
    out = {}
    if not os.path.exists(path):
        return out
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            val = []
            while i < len(lines) and lines[i] != delim:
                val.append(lines[i])
                i += 1
            if i >= len(lines):
                raise Unsupported("%s: no closing %s for %s" % (path, delim, name))
            i += 1
            out[name] = "\n".join(val)
        elif "=" in line:
            name, val = line.split("=", 1)
            out[name] = val
        else:
            raise Unsupported("%s: cannot read the line %r" % (path, line))
    return out


class GitHubJob:
    def __init__(self, wf, job_id, ctx):
        self.wf = wf
        self.ctx = ctx
        if job_id not in wf.get("jobs", {}):
            raise Unsupported("the workflow has no job %r" % job_id)
        self.job_id = job_id
        self.job = wf["jobs"][job_id]
        self.workdir = ctx["workdir"]
        self.out = ctx["out"]
        self.temp = os.path.join(self.out, "runner-temp")
        self.steps_ctx = {}
        self.status = "success"
        self.results = []
        self.extra_env = {}
        self.extra_path = []
        self.env_ctx = {}
        perms = self.job.get("permissions", wf.get("permissions", {}))
        self.perms = perms if isinstance(perms, dict) else {}

    # expressions
    def funcs(self):
        def hash_files(*pats):
            h = hashlib.sha256()
            found = False
            for p in pats:
                for f in sorted(glob.glob(os.path.join(self.workdir, p), recursive=True)):
                    if os.path.isfile(f):
                        found = True
                        h.update(hashlib.sha256(open(f, "rb").read()).digest())
            return h.hexdigest() if found else ""

        def fmt(s, *args):
            return re.sub(r"\{(\d+)\}", lambda m: to_str(args[int(m.group(1))]), s)

        def contains(a, b):
            if isinstance(a, list):
                return any(loose_eq(x, b) for x in a)
            return to_str(b).lower() in to_str(a).lower()

        return {
            "success": lambda: self.status == "success",
            "failure": lambda: self.status == "failure",
            "always": lambda: True,
            "cancelled": lambda: False,
            "contains": contains,
            "startswith": lambda a, b: to_str(a).lower().startswith(to_str(b).lower()),
            "endswith": lambda a, b: to_str(a).lower().endswith(to_str(b).lower()),
            "format": fmt,
            "join": lambda a, sep=",": sep.join(to_str(x) for x in a) if isinstance(a, list) else to_str(a),
            "tojson": lambda a: json.dumps(a, indent=2),
            "fromjson": lambda a: json.loads(a),
            "hashfiles": hash_files,
        }

    def exprctx(self):
        return {
            "github": self.ctx.get("github", {}),
            "env": self.env_ctx,
            "vars": self.ctx.get("vars", {}),
            "secrets": self.ctx.get("secrets", {}),
            "steps": self.steps_ctx,
            "runner": {"os": "Linux", "arch": "X64", "temp": self.temp, "name": "ci_run"},
            "job": {"status": self.status},
            "inputs": {},
            "matrix": {},
            "needs": {},
        }

    def eval(self, text):
        return Expr(text, self.exprctx(), self.funcs()).run()

    def subst(self, value):
        """${{ }} in a string; anything else is returned as is."""
        if not isinstance(value, str):
            return value
        return re.sub(r"\$\{\{(.*?)\}\}", lambda m: to_str(self.eval(m.group(1))), value, flags=re.S)

    def condition(self, cond):
        if cond is None:
            return self.status == "success"
        if isinstance(cond, bool):
            return cond and self.status == "success"
        text = str(cond).strip()
        m = re.fullmatch(r"\$\{\{(.*)\}\}", text, flags=re.S)
        if m:
            text = m.group(1)
        # Without a status function, GitHub adds success() && (...).
        if not re.search(r"\b(success|failure|always|cancelled)\s*\(", text):
            text = "success() && (%s)" % text
        return truthy(self.eval(text))

    def base_env(self):
        g = self.ctx.get("github", {})
        env = dict(os.environ)
        env.update(self.ctx.get("env", {}))
        env.update(
            {
                "CI": "true",
                "GITHUB_ACTIONS": "true",
                "GITHUB_WORKSPACE": self.workdir,
                "GITHUB_EVENT_NAME": to_str(g.get("event_name")),
                "GITHUB_SHA": to_str(g.get("sha")),
                "GITHUB_REF": to_str(g.get("ref")),
                "GITHUB_REPOSITORY": to_str(g.get("repository")),
                "GITHUB_RUN_ID": to_str(g.get("run_id")),
                "GITHUB_ACTOR": to_str(g.get("actor")),
                "GITHUB_SERVER_URL": to_str(g.get("server_url")),
                "GITHUB_JOB": self.job_id,
                "RUNNER_TEMP": self.temp,
                "RUNNER_OS": "Linux",
            }
        )
        return env

    def run(self):
        os.makedirs(self.workdir)
        os.makedirs(os.path.join(self.out, "steps"), exist_ok=True)
        os.makedirs(self.temp, exist_ok=True)
        self.summary = os.path.join(self.out, "summary.md")
        open(self.summary, "a").close()
        # Workflow env first (it may refer to vars and secrets), then the job's.
        for scope in (self.wf.get("env") or {}, self.job.get("env") or {}):
            for k, v in scope.items():
                self.env_ctx[k] = to_str(self.subst(v))
        if not self.condition(self.job.get("if")):
            self.status = "skipped"
            return self.finish()
        for n, step in enumerate(self.job.get("steps") or [], 1):
            self.step(n, step)
        return self.finish()

    def finish(self):
        res = {"job": self.job_id, "status": self.status, "steps": self.results}
        with open(os.path.join(self.out, "result.json"), "w") as f:
            json.dump(res, f, indent=2)
        print("ci_run: job %s: %s" % (self.job_id, self.status))
        return 0 if self.status in ("success", "skipped") else 1

    def step(self, n, step):
        sid = step.get("id") or "__step%d" % n
        name = step.get("name") or step.get("uses") or (step.get("run") or "").split("\n")[0]
        log = os.path.join(self.out, "steps", "%02d-%s.log" % (n, re.sub(r"[^A-Za-z0-9_.-]+", "-", sid)))
        rec = {"name": name, "id": step.get("id"), "outcome": "skipped", "conclusion": "skipped",
               "exit": None, "log": log}
        self.results.append(rec)
        if not self.condition(step.get("if")):
            print("ci_run: step %r: skipped" % name)
            self.steps_ctx[sid] = {"outcome": "skipped", "conclusion": "skipped", "outputs": {}}
            return
        step_env = {k: to_str(self.subst(v)) for k, v in (step.get("env") or {}).items()}
        outputs = {}
        rec["started"] = time.time()
        with open(log, "w") as logf:
            if "uses" in step:
                rc = self.uses(step, step_env, outputs, logf)
            else:
                rc = self.shell(step, step_env, outputs, logf)
        rec["finished"] = time.time()
        sys.stdout.write(open(log).read())
        rec["exit"] = rc
        rec["outcome"] = "success" if rc == 0 else "failure"
        cont = truthy(self.subst(step.get("continue-on-error", False)))
        rec["conclusion"] = "success" if rc == 0 or cont else "failure"
        self.steps_ctx[sid] = {"outcome": rec["outcome"], "conclusion": rec["conclusion"], "outputs": outputs}
        rec["outputs"] = outputs
        print("ci_run: step %r: %s (exit %s, conclusion %s)" % (name, rec["outcome"], rc, rec["conclusion"]))
        if rec["conclusion"] == "failure":
            self.status = "failure"

    def step_environ(self, step_env):
        env = self.base_env()
        env.update(self.env_ctx)
        env.update(self.extra_env)
        env.update(step_env)
        if self.extra_path:
            env["PATH"] = os.pathsep.join(list(reversed(self.extra_path)) + [env.get("PATH", "")])
        return env

    def shell(self, step, step_env, outputs, logf):
        script = self.subst(step["run"])
        shell = step.get("shell", (self.job.get("defaults") or {}).get("run", {}).get("shell"))
        if shell is None:
            argv = ["bash", "-e"]
        elif shell == "bash":
            argv = ["bash", "--noprofile", "--norc", "-eo", "pipefail"]
        elif shell == "sh":
            argv = ["sh", "-e"]
        else:
            raise Unsupported("shell %r is not emulated" % shell)
        files = {}
        for var in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH"):
            fd, files[var] = tempfile.mkstemp(prefix=var.lower() + ".", dir=self.temp)
            os.close(fd)
        env = self.step_environ(step_env)
        env.update(files)
        env["GITHUB_STEP_SUMMARY"] = self.summary
        fd, path = tempfile.mkstemp(suffix=".sh", dir=self.temp)
        with os.fdopen(fd, "w") as f:
            f.write(script)
        cwd = os.path.join(self.workdir, step.get("working-directory", ""))
        try:
            rc = subprocess.run(argv + [path], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=logf, stderr=subprocess.STDOUT,
                                timeout=float(self.ctx.get("timeout", 600))).returncode
        except subprocess.TimeoutExpired:
            logf.write("ci_run: the step took longer than %s s\n" % self.ctx.get("timeout", 600))
            rc = 124
        outputs.update(parse_kv_file(files["GITHUB_OUTPUT"]))
        self.extra_env.update(parse_kv_file(files["GITHUB_ENV"]))
        self.env_ctx.update(parse_kv_file(files["GITHUB_ENV"]))
        for line in open(files["GITHUB_PATH"]).read().split("\n"):
            if line.strip():
                self.extra_path.append(line.strip())
        return rc

    # uses: the emulated actions
    def uses(self, step, step_env, outputs, logf):
        action = step["uses"].split("@")[0]
        with_ = {k: to_str(self.subst(v)) for k, v in (step.get("with") or {}).items()}
        fn = USES.get(action)
        if fn is None:
            raise Unsupported("the action %s is not emulated" % step["uses"])
        try:
            return fn(self, with_, step_env, outputs, logf)
        except StepFailed as e:
            logf.write("::error::%s\n" % e)
            return 1

    def need_permission(self, scope, level):
        have = self.perms.get(scope)
        if have != level and not (level == "read" and have == "write"):
            raise StepFailed("the job lacks permissions: %s: %s, which this action needs" % (scope, level))


class StepFailed(Exception):
    pass


def act_checkout(job, with_, env, outputs, logf):
    sha = to_str(job.ctx["github"].get("sha"))
    run_git(["git", "clone", "-q", job.ctx["repo"], job.workdir], logf)
    run_git(["git", "-C", job.workdir, "checkout", "-q", "--detach", sha], logf)
    return 0


def run_git(argv, logf):
    r = subprocess.run(argv, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        raise StepFailed("%s failed" % " ".join(argv))


def act_upload_artifact(job, with_, env, outputs, logf):
    name = with_.get("name") or "artifact"
    dest = os.path.join(job.ctx["artifacts"], name)
    if os.path.exists(dest) and with_.get("overwrite") != "true":
        raise StepFailed("an artifact named %r already exists in this run" % name)
    files = []
    for pat in with_.get("path", "").split("\n"):
        if pat.strip():
            files += [f for f in glob.glob(os.path.join(job.workdir, pat.strip())) if os.path.isfile(f)]
    if not files:
        if with_.get("if-no-files-found", "warn") == "error":
            raise StepFailed("no files were found with the provided path: %s" % with_.get("path"))
        logf.write("::warning::no files were found; no artifact uploaded\n")
        return 0
    os.makedirs(dest, exist_ok=True)
    for f in files:
        shutil.copy(f, os.path.join(dest, os.path.basename(f)))
        logf.write("uploaded %s to artifact %s\n" % (os.path.relpath(f, job.workdir), name))
    return 0


def act_download_artifact(job, with_, env, outputs, logf):
    name = with_.get("name")
    src = os.path.join(job.ctx["artifacts"], name or "")
    if not name or not os.path.isdir(src):
        raise StepFailed("unable to find an artifact named %r" % name)
    dest = os.path.join(job.workdir, with_.get("path", "."))
    os.makedirs(dest, exist_ok=True)
    for f in os.listdir(src):
        shutil.copy(os.path.join(src, f), dest)
    return 0


def check_sarif(path):
    """The parts of SARIF 2.1.0 code scanning requires; returns a fault or None."""
    try:
        doc = json.load(open(path))
    except (OSError, ValueError) as e:
        return "%s is not a JSON file: %s" % (path, e)
    if doc.get("version") != "2.1.0":
        return "%s: version is %r, not 2.1.0" % (path, doc.get("version"))
    runs = doc.get("runs")
    if not isinstance(runs, list) or not runs:
        return "%s: runs[] is missing or empty" % path
    for r in runs:
        if not isinstance(r.get("tool", {}).get("driver", {}).get("name"), str):
            return "%s: a run has no tool.driver.name" % path
        for res in r.get("results", []):
            if not isinstance(res.get("message", {}).get("text"), str):
                return "%s: a result has no message.text" % path
            if not res.get("ruleId") and not res.get("rule"):
                return "%s: a result names no rule" % path
            fault = check_sarif_locations(path, r, res)
            if fault:
                return fault
    return None


def check_sarif_locations(path, run, res):
    """Code scanning shows a result on a file of the repository only by a relative path."""
    bases = run.get("originalUriBaseIds", {})
    for loc in res.get("locations", []):
        art = loc.get("physicalLocation", {}).get("artifactLocation", {})
        uri = art.get("uri", "")
        if "://" in uri or uri.startswith("/"):
            return "%s: a result's uri %r is not relative to the repository" % (path, uri)
        if "uriBaseId" in art and art["uriBaseId"] not in bases:
            return "%s: uriBaseId %r is not in originalUriBaseIds" % (path, art["uriBaseId"])
    return None


def act_upload_sarif(job, with_, env, outputs, logf):
    job.need_permission("security-events", "write")
    path = os.path.join(job.workdir, with_.get("sarif_file", ""))
    if not os.path.isfile(path):
        raise StepFailed("Path does not exist: %s" % with_.get("sarif_file"))
    fault = check_sarif(path)
    if fault:
        raise StepFailed("invalid SARIF: " + fault)
    dest = os.path.join(job.out, "sarif")
    os.makedirs(dest, exist_ok=True)
    shutil.copy(path, os.path.join(dest, (with_.get("category") or "default") + ".sarif"))
    logf.write("uploaded %s (category %s)\n" % (with_.get("sarif_file"), with_.get("category")))
    return 0


# github-script: the script runs in node with github.rest.issues mocked over
# out/comments.json, as actions/github-script wraps it (an async function of
# github, context, core, require...).
GITHUB_SCRIPT_HARNESS = r"""
const fs = require('fs');
const store = process.env.CI_RUN_COMMENTS;
const load = () => fs.existsSync(store) ? JSON.parse(fs.readFileSync(store, 'utf8')) : [];
const save = (c) => fs.writeFileSync(store, JSON.stringify(c, null, 2));
const ctx = JSON.parse(process.env.CI_RUN_CONTEXT);
const issue = (p) => { if (p.issue_number !== ctx.issue.number) throw new Error('wrong issue ' + p.issue_number); };
const github = {
  rest: { issues: {
    listComments: async (p) => { issue(p); return { data: load() }; },
    createComment: async (p) => { issue(p); const c = load();
      const n = { id: c.length + 1, body: p.body, user: { login: 'github-actions[bot]' } };
      c.push(n); save(c); return { data: n }; },
    updateComment: async (p) => { const c = load(); const x = c.find(e => e.id === p.comment_id);
      if (!x) throw new Error('no comment ' + p.comment_id); x.body = p.body; save(c); return { data: x }; },
  } },
  paginate: async (fn, p) => (await fn(p)).data,
};
const core = { setFailed: (m) => { console.log('::error::' + m); process.exitCode = 1; },
  info: console.log, warning: (m) => console.log('::warning::' + m), error: (m) => console.log('::error::' + m),
  setOutput: () => {} };
const context = { repo: ctx.repo, issue: ctx.issue, payload: ctx.payload, eventName: ctx.eventName,
  sha: ctx.sha, runId: ctx.runId };
const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
const fn = new AsyncFunction('github', 'context', 'core', 'require', fs.readFileSync(process.argv[2], 'utf8'));
fn(github, context, core, require).catch((e) => { console.log('::error::' + e.message); process.exitCode = 1; });
"""


def act_github_script(job, with_, env, outputs, logf):
    g = job.ctx["github"]
    if shutil.which("node") is None:
        raise Unsupported("actions/github-script is run with node, which is not installed")
    ev = g.get("event", {})
    number = (ev.get("pull_request") or {}).get("number") or ev.get("number")
    owner, _, repo = to_str(g.get("repository")).partition("/")
    job.need_permission("pull-requests", "write")
    fd, script = tempfile.mkstemp(suffix=".js", dir=job.temp)
    with os.fdopen(fd, "w") as f:
        f.write(with_.get("script", ""))
    fd, harness = tempfile.mkstemp(suffix=".js", dir=job.temp)
    with os.fdopen(fd, "w") as f:
        f.write(GITHUB_SCRIPT_HARNESS)
    e = job.step_environ(env)
    e["CI_RUN_COMMENTS"] = job.ctx.get("comments") or os.path.join(job.out, "comments.json")
    e["CI_RUN_CONTEXT"] = json.dumps({"repo": {"owner": owner, "repo": repo}, "issue": {"number": number},
                                      "payload": ev, "eventName": g.get("event_name"), "sha": g.get("sha"),
                                      "runId": g.get("run_id")})
    return subprocess.run(["node", harness, script], cwd=job.workdir, env=e, stdin=subprocess.DEVNULL,
                          stdout=logf, stderr=subprocess.STDOUT).returncode


def act_aws_credentials(job, with_, env, outputs, logf):
    role = with_.get("role-to-assume", "")
    if role:
        job.need_permission("id-token", "write")
    if not role:
        raise StepFailed("Credentials could not be loaded, please check your action inputs "
                         "(role-to-assume is empty)")
    if not with_.get("aws-region"):
        raise StepFailed("Input required and not supplied: aws-region")
    creds = job.ctx.get("roles", {}).get(role)
    if creds is None:
        raise StepFailed("Could not assume role %s: not a role of this test" % role)
    job.extra_env.update(creds)
    job.extra_env["AWS_REGION"] = job.extra_env["AWS_DEFAULT_REGION"] = with_["aws-region"]
    logf.write("assumed %s (session %s)\n" % (role, with_.get("role-session-name")))
    return 0


USES = {
    "actions/checkout": act_checkout,
    "actions/upload-artifact": act_upload_artifact,
    "actions/download-artifact": act_download_artifact,
    "github/codeql-action/upload-sarif": act_upload_sarif,
    "actions/github-script": act_github_script,
    "aws-actions/configure-aws-credentials": act_aws_credentials,
}


# --- GitLab CI ------------------------------------------------------------------

GL_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def gl_expand(value, env):
    return GL_VAR.sub(lambda m: env.get(m.group(1) or m.group(2), ""), to_str(value))


def gl_rule(expr, env):
    """A rules: if: expression: $VAR, "str", ==, !=, =~ /re/, &&, ||, ( )."""
    toks = re.findall(r'\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|"(?:[^"\\]|\\.)*"|\'[^\']*\'|/(?:[^/\\]|\\.)*/|==|!=|=~|!~|&&|\|\||\(|\)|null|\S+', expr)
    pos = [0]

    def peek():
        return toks[pos[0]] if pos[0] < len(toks) else None

    def atom():
        t = toks[pos[0]]
        pos[0] += 1
        if t == "(":
            v = or_()
            pos[0] += 1
            return v
        if t.startswith("$"):
            name = t.strip("${}")
            return env.get(name)
        if t[0] in "\"'":
            return t[1:-1]
        if t == "null":
            return None
        if t.startswith("/"):
            return re.compile(t[1:-1])
        raise Unsupported("cannot read the rule %r at %r" % (expr, t))

    def cmp():
        v = atom()
        if peek() in ("==", "!=", "=~", "!~"):
            op = toks[pos[0]]
            pos[0] += 1
            r = atom()
            if op in ("=~", "!~"):
                hit = v is not None and bool(r.search(v))
                return hit if op == "=~" else not hit
            eq = v == r
            return eq if op == "==" else not eq
        return bool(v)

    def and_():
        v = cmp()
        while peek() == "&&":
            pos[0] += 1
            r = cmp()
            v = v and r
        return v

    def or_():
        v = and_()
        while peek() == "||":
            pos[0] += 1
            r = and_()
            v = v or r
        return v

    return or_()


def gl_script(v):
    if v is None:
        return []
    return [v] if isinstance(v, str) else list(v)


def gl_merge(base, over):
    """extends: hashes merge deeply, anything else is replaced."""
    out = dict(base)
    for k, v in over.items():
        out[k] = gl_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def gl_resolve(doc, name, seen=()):
    job = doc.get(name)
    if not isinstance(job, dict) or name in seen:
        raise Unsupported("the CI file has no job %r (or extends loops)" % name)
    ext = job.get("extends")
    if ext is None:
        return job
    merged = {}
    for parent in gl_script(ext):
        merged = gl_merge(merged, gl_resolve(doc, parent, seen + (name,)))
    job = gl_merge(merged, {k: v for k, v in job.items() if k != "extends"})
    return job


def run_gitlab(doc, job_id, ctx):
    if job_id.startswith("."):
        raise Unsupported("%s is a hidden job" % job_id)
    job = gl_resolve(doc, job_id)
    default = doc.get("default") or {}
    out, workdir = ctx["out"], ctx["workdir"]
    os.makedirs(os.path.join(out, "steps"), exist_ok=True)
    known = {"stage", "image", "rules", "variables", "before_script", "script", "after_script", "needs",
             "artifacts", "resource_group", "id_tokens", "interruptible", "environment", "dependencies",
             "allow_failure", "timeout"}
    for k in job:
        if k not in known:
            raise Unsupported("the job keyword %r is not emulated" % k)
    env = dict(os.environ)
    env.update(ctx.get("env", {}))
    given = {k: to_str(v) for k, v in ctx.get("variables", {}).items()}
    env.update(given)
    env.update({"CI": "true", "GITLAB_CI": "true", "CI_JOB_NAME": job_id, "CI_PROJECT_DIR": workdir,
                "CI_BUILDS_DIR": os.path.join(out, "builds")})
    os.makedirs(env["CI_BUILDS_DIR"], exist_ok=True)
    # The file's variables, then the job's; project variables (given) win over both.
    for scope in (doc.get("variables") or {}, job.get("variables") or {}):
        for k, v in scope.items():
            if isinstance(v, dict):
                v = v.get("value", "")
            if k not in given:
                env[k] = gl_expand(v, env)
    result = {"job": job_id, "status": "skipped", "steps": []}

    def finish():
        with open(os.path.join(out, "result.json"), "w") as f:
            json.dump(result, f, indent=2)
        print("ci_run: job %s: %s" % (job_id, result["status"]))
        return 0 if result["status"] in ("success", "skipped") else 1

    rules = job.get("rules")
    if rules is not None:
        hit = None
        for r in rules:
            if "if" not in r or gl_rule(r["if"], env):
                hit = r
                break
        if hit is None or hit.get("when") == "never":
            return finish()
        for k, v in (hit.get("variables") or {}).items():
            env[k] = gl_expand(v, env)
    for name, spec in (job.get("id_tokens") or {}).items():
        if not spec.get("aud"):
            raise Unsupported("id_tokens.%s has no aud" % name)
        env[name] = "ci-run.fake-id-token.%s" % job_id
    run_git(["git", "clone", "-q", ctx["repo"], workdir], sys.stdout)
    run_git(["git", "-C", workdir, "checkout", "-q", "--detach", env["CI_COMMIT_SHA"]], sys.stdout)
    for need in job.get("needs") or []:
        name = need if isinstance(need, str) else need.get("job")
        if isinstance(need, dict) and need.get("artifacts") is False:
            continue
        src = os.path.join(ctx["artifacts"], name)
        if not os.path.isdir(src):
            raise Unsupported("job %s needs the artifacts of %s, which has not run" % (job_id, name))
        for root, _, files in os.walk(src):
            for f in files:
                rel = os.path.relpath(os.path.join(root, f), src)
                os.makedirs(os.path.dirname(os.path.join(workdir, rel)), exist_ok=True)
                shutil.copy(os.path.join(root, f), os.path.join(workdir, rel))

    def sh(name, lines, log):
        script = "\n".join(lines) + "\n"
        with open(log, "w") as logf:
            try:
                rc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                                    cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=logf,
                                    stderr=subprocess.STDOUT,
                                    timeout=float(ctx.get("timeout", 600))).returncode
            except subprocess.TimeoutExpired:
                logf.write("ci_run: the script took longer than %s s\n" % ctx.get("timeout", 600))
                rc = 124
        sys.stdout.write(open(log).read())
        result["steps"].append({"name": name, "exit": rc, "outcome": "success" if rc == 0 else "failure",
                                "log": log})
        print("ci_run: %s: exit %d" % (name, rc))
        return rc

    before = gl_script(job.get("before_script", default.get("before_script")))
    rc = sh("script", before + gl_script(job.get("script")), os.path.join(out, "steps", "01-script.log"))
    env["CI_JOB_STATUS"] = "success" if rc == 0 else "failed"
    after = gl_script(job.get("after_script", default.get("after_script")))
    if after:
        sh("after_script", after, os.path.join(out, "steps", "02-after_script.log"))
    arts = job.get("artifacts") or {}
    when = arts.get("when", "on_success")
    if when == "always" or (when == "on_success") == (rc == 0):
        dest = os.path.join(ctx["artifacts"], job_id)
        paths = list(arts.get("paths") or [])
        reports = arts.get("reports") or {}
        for kind, p in reports.items():
            if kind not in ("codequality", "sast", "dotenv", "junit"):
                raise Unsupported("artifacts:reports:%s is not emulated" % kind)
            paths += gl_script(p)
        for pat in paths:
            for f in glob.glob(os.path.join(workdir, gl_expand(pat, env))):
                if os.path.isfile(f):
                    rel = os.path.relpath(f, workdir)
                    os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
                    shutil.copy(f, os.path.join(dest, rel))
        for kind, p in reports.items():
            for pat in gl_script(p):
                if not glob.glob(os.path.join(workdir, pat)):
                    print("ci_run: WARNING: artifacts:reports:%s %s: no such file" % (kind, pat))
    allowed = job.get("allow_failure")
    if rc == 0:
        result["status"] = "success"
    elif isinstance(allowed, dict) and rc in gl_script(allowed.get("exit_codes")):
        result["status"] = "success"
    elif allowed is True:
        result["status"] = "success"
    else:
        result["status"] = "failure"
    result["exit"] = rc
    return finish()


# --- a fake GitLab notes API, for the MR comment ------------------------------


def gitlab_api(port_file, store, token):
    import http.server

    def load():
        return json.load(open(store)) if os.path.exists(store) else []

    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def reply(self, code, obj):
            data = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def route(self):
            if self.headers.get("PRIVATE-TOKEN") != token:
                self.reply(401, {"message": "401 Unauthorized"})
                return None
            m = re.fullmatch(r"/api/v4/projects/([^/]+)/merge_requests/(\d+)/notes(?:/(\d+))?(?:\?.*)?", self.path)
            if not m:
                self.reply(404, {"message": "404 Not Found"})
                return None
            return m

        def body(self):
            n = int(self.headers.get("Content-Length", 0))
            raw = self.rfile.read(n).decode()
            if self.headers.get("Content-Type", "").startswith("application/json"):
                return json.loads(raw).get("body")
            return urllib.parse.parse_qs(raw, keep_blank_values=True).get("body", [None])[0]

        def do_GET(self):
            m = self.route()
            if m:
                self.reply(200, [n for n in load() if n["mr"] == int(m.group(2))])

        def do_POST(self):
            m = self.route()
            if m:
                notes = load()
                n = {"id": len(notes) + 1, "mr": int(m.group(2)), "body": self.body()}
                notes.append(n)
                json.dump(notes, open(store, "w"), indent=2)
                self.reply(201, n)

        def do_PUT(self):
            m = self.route()
            if m:
                notes = load()
                x = [n for n in notes if n["id"] == int(m.group(3) or 0)]
                if not x:
                    self.reply(404, {"message": "404 Note Not Found"})
                    return
                x[0]["body"] = self.body()
                json.dump(notes, open(store, "w"), indent=2)
                self.reply(200, x[0])

    srv = http.server.HTTPServer(("127.0.0.1", 0), H)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(srv.server_port))
    os.rename(port_file + ".tmp", port_file)
    srv.serve_forever()


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "gitlab-api":
        gitlab_api(sys.argv[2], sys.argv[3], sys.argv[4])
        return 0
    if len(sys.argv) != 5 or sys.argv[1] not in ("github", "gitlab"):
        sys.stderr.write(__doc__)
        return 2
    kind, path, job_id, ctx_path = sys.argv[1:]
    ctx = json.load(open(ctx_path))
    doc = yaml.safe_load(open(path))
    try:
        if kind == "github":
            return GitHubJob(doc, job_id, ctx).run()
        return run_gitlab(doc, job_id, ctx)
    except Unsupported as e:
        print("ci_run: cannot run %s: %s" % (job_id, e))
        return 2


if __name__ == "__main__":
    sys.exit(main())
