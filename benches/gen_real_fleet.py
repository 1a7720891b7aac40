#!/usr/bin/env python3
"""Makes a fleet of nodes with real Facter output (deterministic for given arguments).

    benches/gen_real_fleet.py OUT_DIR [--nodes 3000] [--facts DIR]

DIR (default benches/realworld/facts) holds N real fact sets, one JSON hash a file. Node i
(0-based) is a copy of set i mod N (sets in name order), renamed to node<i>.<domain>, where the
domain is dc<i mod 10>.example.com: clientcert, fqdn, hostname, domain, networking.fqdn /
hostname / domain, trusted.certname / hostname / domain when there is a `trusted` hash, and the
primary IPv4 address (networking.ip, ipaddress, and wherever the old address appears in
networking.interfaces and the legacy ipaddress_<interface> facts) becomes 10.<i>.<i>.<i>-style
unique. Everything else is the real fact set, byte for byte in the same layout (two-space JSON,
keys in their order). OUT_DIR gets <certname>.json for every node; it is emptied of *.json first.
"""
import argparse
import glob
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def node_ip(i):
    # 10.0.0.0/8 minus .0 and .255 host parts: unique for up to 254 * 256 * 256 nodes.
    return "10.%d.%d.%d" % ((i // (254 * 256)) % 256, (i // 254) % 256, i % 254 + 1)


def replace_ip(v, old, new):
    """Every string equal to the old primary address, anywhere under v, becomes the new one."""
    if isinstance(v, dict):
        return {k: replace_ip(x, old, new) for k, x in v.items()}
    if isinstance(v, list):
        return [replace_ip(x, old, new) for x in v]
    return new if v == old else v


def rename(facts, i):
    host = "node%05d" % i
    domain = "dc%02d.example.com" % (i % 10)
    fqdn = host + "." + domain
    f = dict(facts)
    for k, v in (("clientcert", fqdn), ("fqdn", fqdn), ("hostname", host), ("domain", domain)):
        if k in f:
            f[k] = v
    net = f.get("networking")
    old_ip = (net or {}).get("ip") or f.get("ipaddress")
    new_ip = node_ip(i)
    if isinstance(net, dict):
        net = dict(net)
        for k, v in (("fqdn", fqdn), ("hostname", host), ("domain", domain)):
            if k in net:
                net[k] = v
        f["networking"] = net
    if old_ip:
        for k in list(f):
            if k == "networking" or k == "ipaddress" or k.startswith("ipaddress_"):
                f[k] = replace_ip(f[k], old_ip, new_ip)
    t = f.get("trusted")
    if isinstance(t, dict):
        t = dict(t)
        for k, v in (("certname", fqdn), ("hostname", host), ("domain", domain)):
            if k in t:
                t[k] = v
        f["trusted"] = t
    return fqdn, f


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--nodes", type=int, default=3000)
    ap.add_argument("--facts", default=os.path.join(HERE, "realworld", "facts"))
    a = ap.parse_args()
    sources = sorted(glob.glob(os.path.join(a.facts, "*.json")))
    if not sources:
        raise SystemExit(f"no *.json fact sets in {a.facts}")
    sets = []
    for p in sources:
        with open(p, encoding="utf-8") as fh:
            sets.append(json.load(fh))
    os.makedirs(a.out, exist_ok=True)
    for old in glob.glob(os.path.join(a.out, "*.json")):
        os.remove(old)
    total = 0
    for i in range(a.nodes):
        name, facts = rename(sets[i % len(sets)], i)
        text = json.dumps(facts, indent=2, ensure_ascii=False) + "\n"
        with open(os.path.join(a.out, name + ".json"), "w", encoding="utf-8") as fh:
            fh.write(text)
        total += len(text.encode("utf-8"))
    print(f"{a.nodes} nodes from {len(sets)} real fact sets in {a.out}: {total / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
