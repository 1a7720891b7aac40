#!/usr/bin/env python3
"""Generates the benchmark control repo (deterministic for given sizes).

    benches/gen_control_repo.py OUT_DIR [--nodes 5000] [--roles 100] [--common-keys 5000]

OUT_DIR gets an environment directory (hiera.yaml, data/, environment.conf) usable in
control-repo mode, plus facts/<node>.yaml for every node. Levels: node, role, OS release,
OS family, datacenter, common.
"""
import argparse
import os
import random

FAMILIES = [("Debian", "Debian", ["11", "12"]), ("RedHat", "Rocky", ["8", "9"]), ("Suse", "SLES", ["15"])]
DCS = ["dc%02d" % i for i in range(10)]


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--roles", type=int, default=100)
    ap.add_argument("--common-keys", type=int, default=5000)
    a = ap.parse_args()
    rnd = random.Random(42)
    out = a.out
    write(os.path.join(out, "environment.conf"), "modulepath = modules\n")
    write(os.path.join(out, "hiera.yaml"), """---
version: 5
defaults:
  datadir: data
  data_hash: yaml_data
hierarchy:
  - name: "Per-node data"
    path: "nodes/%{trusted.certname}.yaml"
  - name: "Per-role data"
    path: "roles/%{facts.role}.yaml"
  - name: "Per-OS release"
    path: "os/%{facts.os.family}/%{facts.os.release.major}.yaml"
  - name: "Per-OS family"
    path: "os/%{facts.os.family}.yaml"
  - name: "Per-datacenter"
    path: "dc/%{facts.datacenter}.yaml"
  - name: "Common"
    path: "common.yaml"
""")
    # common.yaml: scalars, arrays and hashes; some keys deep-merged through lookup_options.
    lines = ["---", "lookup_options:", "  '^profile::users::.*':", "    merge: deep",
             "  profile::packages:", "    merge: unique"]
    for i in range(a.common_keys):
        kind = i % 4
        k = "profile::common::key%05d" % i
        if kind == 0:
            lines.append("%s: value-%d" % (k, i))
        elif kind == 1:
            lines.append("%s: %d" % (k, rnd.randint(0, 100000)))
        elif kind == 2:
            lines.append("%s: [a%d, b%d, c%d]" % (k, i, i, i))
        else:
            lines.append("%s:\n  name: n%d\n  port: %d\n  enabled: true" % (k, i, 1000 + i))
    lines.append("profile::packages: [vim, curl, htop]")
    lines.append("profile::motd: 'Welcome to %{facts.networking.fqdn} in %{facts.datacenter}'")
    for u in range(20):
        lines.append("profile::users::group%02d:\n  alice: {uid: 1001}\n  bob: {uid: 1002}" % u)
    write(os.path.join(out, "data", "common.yaml"), "\n".join(lines) + "\n")
    for fam, name, majors in FAMILIES:
        write(os.path.join(out, "data", "os", fam + ".yaml"),
              "---\nprofile::packages: [%s-tools]\nprofile::service: svc-%s\n" % (fam.lower(), fam.lower()))
        for m in majors:
            write(os.path.join(out, "data", "os", fam, m + ".yaml"),
                  "---\nprofile::release_note: %s %s\n" % (name, m))
    for dc in DCS:
        write(os.path.join(out, "data", "dc", dc + ".yaml"),
              "---\nprofile::ntp_servers: [ntp1.%s.example.com, ntp2.%s.example.com]\n" % (dc, dc))
    for r in range(a.roles):
        body = ["---", "profile::role_name: role%03d" % r, "profile::packages: [pkg-role%03d]" % r]
        for j in range(20):
            body.append("profile::role::setting%02d: role%03d-%d" % (j, r, j))
        body.append("profile::users::group%02d:\n  carol%03d: {uid: %d}" % (r % 20, r, 2000 + r))
        write(os.path.join(out, "data", "roles", "role%03d.yaml" % r), "\n".join(body) + "\n")
    for n in range(a.nodes):
        node = "node%05d.example.com" % n
        fam, name, majors = FAMILIES[n % len(FAMILIES)]
        major = majors[n % len(majors)]
        write(os.path.join(out, "data", "nodes", node + ".yaml"),
              "---\nprofile::node_id: %d\nprofile::common::key%05d: overridden-%d\n" % (n, n % a.common_keys, n))
        write(os.path.join(out, "facts", node + ".yaml"), """---
clientcert: %s
hostname: node%05d
domain: example.com
fqdn: %s
role: role%03d
datacenter: %s
networking:
  fqdn: %s
os:
  family: %s
  name: %s
  release:
    major: "%s"
""" % (node, n, node, n % a.roles, DCS[n % len(DCS)], node, fam, name, major))


if __name__ == "__main__":
    main()
