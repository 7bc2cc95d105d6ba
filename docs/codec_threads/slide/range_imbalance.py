# Single-thread compression time of each of N equal ranges of a field (REL 1e-4, best of 5),
# max over mean: the idle time a static split into N ranges leaves. Usage:
#   python3 range_imbalance.py ZCOLL_BENCH FIELD...
import subprocess,json,os,sys,statistics as st
bench=sys.argv[1]
files=sys.argv[2:]
for f in files:
    data=open(f,'rb').read()
    n=len(data)
    res={}
    for parts in (2,4,16):
        ts=[]
        for i in range(parts):
            a=n*i//parts; b=n*(i+1)//parts; a-=a%8; b-=b%8
            open('/tmp/zcoll_range_part.bin','wb').write(data[a:b])
            ext = '.f64' if f.endswith('f64') else '.f32'
            os.replace('/tmp/zcoll_range_part.bin','/tmp/zcoll_range_part'+ext)
            out=subprocess.run([bench,'codec','--input','/tmp/zcoll_range_part'+ext,'--eb-mode','rel','--eb','1e-4','--threads','1','--repeat','5','--json'],capture_output=True,text=True).stdout
            d=json.loads(out); ts.append((b-a)/d['comp_gbps']/1e9)
        res[parts]=max(ts)/st.mean(ts)
    print(os.path.basename(f), ' '.join(f'{p} ranges: max/mean {v:.3f}' for p,v in res.items()))
