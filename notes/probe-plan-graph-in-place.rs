
/// PROBE ONLY: InPlace's loop on memplan's own captured graph.
type KernelNode = (cu::CUgraphNode, cu::CUDA_KERNEL_NODE_PARAMS, [u64; 4]);
fn kernel_nodes(graph: cu::CUgraph) -> memplan::Result<Vec<KernelNode>> {
    let mut count = 0;
    unsafe { driver(cu::cuGraphGetNodes(graph, std::ptr::null_mut(), &mut count), "n")? };
    let mut nodes = vec![std::ptr::null_mut(); count];
    unsafe { driver(cu::cuGraphGetNodes(graph, nodes.as_mut_ptr(), &mut count), "n")? };
    let mut kernels = Vec::new();
    for node in nodes {
        let mut kind = cu::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY;
        unsafe {
            driver(cu::cuGraphNodeGetType(node, &mut kind), "t")?;
            if kind == cu::CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL {
                let mut params: cu::CUDA_KERNEL_NODE_PARAMS = std::mem::zeroed();
                driver(cu::cuGraphKernelNodeGetParams(node, &mut params), "p")?;
                let args = params.kernelParams;
                let n = *(*args.add(0) as *const i32) as u64;
                let x = *(*args.add(2) as *const u64);
                let y = *(*args.add(3) as *const u64);
                kernels.push((node, params, [n, 0, x, y]));
            }
        }
    }
    if let Some((_, p, a)) = kernels.first() {
        println!("  first kernel node: func {:?} grid {} {} {} block {} {} {} shared {} extra {:?} args n {} x {:#x} y {:#x}", p.func, p.gridDimX, p.gridDimY, p.gridDimZ, p.blockDimX, p.blockDimY, p.blockDimZ, p.sharedMemBytes, p.extra, a[0], a[2], a[3]);
    }
    Ok(kernels)
}

fn set_nodes(exec: cu::CUgraphExec, kernels: &[KernelNode], a: f32, func: Option<cu::CUfunction>) -> memplan::Result<()> {
    for (node, params, [n, _, x, y]) in kernels {
        let n = *n as i32;
        let mut args = [
            (&raw const n).cast_mut().cast(),
            (&raw const a).cast_mut().cast(),
            (&raw const *x).cast_mut().cast(),
            (&raw const *y).cast_mut().cast(),
        ];
        let params = cu::CUDA_KERNEL_NODE_PARAMS { kernelParams: args.as_mut_ptr(), extra: std::ptr::null_mut(), func: func.unwrap_or(params.func), ..*params };
        unsafe { driver(cu::cuGraphExecKernelNodeSetParams(exec, *node, &params), "cuGraphExecKernelNodeSetParams")? };
    }
    Ok(())
}

fn probe_plan_graph_in_place() -> Result<(), memplan::Error> {
    let Some(ctx) = common::context_or_skip("small_ops")? else {
        return Ok(());
    };
    let (n, k) = (ELEMENTS, 100);
    let raws: Vec<RawLaunches> = (0..COPIES).map(|_| RawLaunches::new(&ctx, n)).collect::<Result<_, _>>()?;
    let mut plans: Vec<Launches> = (0..COPIES).map(|_| Launches::new(&ctx, n, k)).collect::<Result<_, _>>()?;
    let mut graphs: Vec<_> = plans.iter_mut().map(|p| p.graph(n, 1.0)).collect::<Result<_, _>>()?;
    let hand: Vec<InPlace> = raws.iter().map(|raw| unsafe { InPlace::new(raw, k) }).collect::<Result<_, _>>()?;
    let hand_kernels: Vec<_> = hand.iter().map(|h| kernel_nodes(h.graph)).collect::<Result<_, _>>()?;
    let plan_kernels: Vec<_> = graphs.iter().map(|g| kernel_nodes(g.probe_handles().0)).collect::<Result<_, _>>()?;
    println!("kernel nodes: by hand {}, plan {}; raw saxpy func {:?}", hand_kernels[0].len(), plan_kernels[0].len(), raws[0].saxpy.raw());
    // Which ways the driver takes.
    for (label, exec, kernels) in [("by hand", hand[0].exec, &hand_kernels[0]), ("plan", graphs[0].probe_handles().1, &plan_kernels[0])] {
        println!("  set {label} with its own func: {:?}", set_nodes(exec, kernels, 1.0, None).err().map(|e| e.to_string()));
        println!("  set {label} with raw's func: {:?}", set_nodes(exec, kernels, 1.0, Some(raws[0].saxpy.raw())).err().map(|e| e.to_string()));
    }
    const BLOCKS: usize = 15;
    const RUNS: usize = 200;
    let names = ["by hand graph, unchanged", "plan graph, unchanged", "by hand graph, changed (InPlace loop)", "plan graph, changed (InPlace loop)", "plan graph, changed, launched by PlanGraph::enqueue"];
    let mut q = vec![vec![Vec::new(); COPIES]; names.len()];
    let mut d = vec![vec![Vec::new(); COPIES]; names.len()];
    let mut failed = vec![None; names.len()];
    for block in 0..BLOCKS + 1 {
        for way in 0..names.len() {
            if failed[way].is_some() { continue; }
            for c in 0..COPIES {
                let (mut queuing, mut total) = (0.0, 0.0);
                for run in 0..RUNS {
                    let a = 1.0 + (run % 2) as f32;
                    let start = Instant::now();
                    let exec = if way % 2 == 0 { hand[c].exec } else { graphs[c].probe_handles().1 };
                    let set = match way {
                        2 => set_nodes(exec, &hand_kernels[c], a, None),
                        3 | 4 => set_nodes(exec, &plan_kernels[c], a, None),
                        _ => Ok(()),
                    };
                    if let Err(e) = set { failed[way] = Some(e.to_string()); break; }
                    if way == 4 {
                        let in_flight = graphs[c].enqueue()?;
                        queuing += start.elapsed().as_secs_f64();
                        drop(in_flight.wait()?);
                    } else {
                        unsafe { driver(cu::cuGraphLaunch(exec, raws[c].stream.raw()), "l")? };
                        queuing += start.elapsed().as_secs_f64();
                        raws[c].stream.synchronize()?;
                    }
                    total += start.elapsed().as_secs_f64();
                }
                if block > 0 && failed[way].is_none() {
                    q[way][c].push(queuing / RUNS as f64);
                    d[way][c].push(total / RUNS as f64);
                }
            }
        }
    }
    let ops = (k + 2) as f64;
    for (way, name) in names.iter().enumerate() {
        if let Some(e) = &failed[way] { println!("  {name:<52} failed: {e}"); continue; }
        let mut best = (f64::MAX, 0.0);
        for c in 0..COPIES {
            let (qq, dd) = (median(&mut q[way][c]), median(&mut d[way][c]));
            if dd < best.0 { best = (dd, qq); }
        }
        println!("  {name:<52} queued {:.3} done {:.3} done-queued {:.3}", best.1 * 1e6 / ops, best.0 * 1e6 / ops, (best.0 - best.1) * 1e6 / ops);
    }
    drop(graphs);
    Ok(())
}
