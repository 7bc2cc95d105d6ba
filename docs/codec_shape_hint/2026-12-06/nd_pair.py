import json,collections,statistics as st,sys
d=collections.defaultdict(dict)
for fn in sys.argv[1:]:
  for l in open(fn):
    j=json.loads(l); k="old" if ("head" in j["build"] or "scan" in j["build"]) else "new"
    d[(fn,j['file'],j['round'])][k]=j
per=collections.defaultdict(lambda: collections.defaultdict(list))
for (fn,f,r),v in d.items():
    if len(v)<2: continue
    per[f]['c'].append(v['new']['comp']/v['old']['comp']); per[f]['d'].append(v['new']['decomp']/v['old']['decomp'])
    per[f]['oc'].append(v['old']['comp']); per[f]['nc'].append(v['new']['comp']); per[f]['od'].append(v['old']['decomp']); per[f]['nd'].append(v['new']['decomp'])
for f,v in per.items():
    print(f"{f:38s} n={len(v['c'])} comp {max(v['oc']):.2f}->{max(v['nc']):.2f} paired median {st.median(v['c']):.2f}x  decomp {max(v['od']):.2f}->{max(v['nd']):.2f} paired median {st.median(v['d']):.2f}x")
