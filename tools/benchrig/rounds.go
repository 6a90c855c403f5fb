package benchrig

// rounds.go: a run of several rounds (Options.Rounds) as one set of points: every round's
// repetitions pooled into one point per scenario x size x flow mode, and each round's capacity ratio
// to the kernel kept beside the pooled one. The kernel's figure on a shared VM moves 1.3-1.7x
// between runs; within a round, kernel and seg6x points are minutes apart, so the median of the
// rounds' own ratios is the comparison a host's slow and fast phases shift least.

// mergeRounds pools rounds (each the same points in the same order, ratios filled in) into one set of
// points, its ratios filled in from the pooled medians, with the per-round capacity ratios.
func mergeRounds(rounds [][]Point) []Point {
	out := make([]Point, len(rounds[0]))
	for j := range out {
		p := rounds[0][j]
		p.NDRRuns, p.PDRRuns, p.DUTNsRuns, p.ProgNsRuns, p.CapacityRuns = nil, nil, nil, nil, nil
		p.BadFrames = 0
		var busy, steal, over, loss, offered, kin, first, vsKernel []float64
		for _, ps := range rounds {
			q := ps[j]
			p.NDRRuns = append(p.NDRRuns, q.NDRRuns...)
			p.PDRRuns = append(p.PDRRuns, q.PDRRuns...)
			p.DUTNsRuns = append(p.DUTNsRuns, q.DUTNsRuns...)
			p.ProgNsRuns = append(p.ProgNsRuns, q.ProgNsRuns...)
			p.CapacityRuns = append(p.CapacityRuns, q.CapacityRuns...)
			p.BadFrames += q.BadFrames
			p.GeneratorLimited = p.GeneratorLimited && q.GeneratorLimited
			busy, steal, over, loss = append(busy, q.DUTBusy), append(steal, q.StealShare), append(over, q.OverloadMpps), append(loss, q.OverloadLoss)
			offered, kin, first = append(offered, q.OfferedMpps), append(kin, q.KernelInRatio), append(first, q.FirstShare)
			if q.CapacityVsKernel > 0 {
				vsKernel = append(vsKernel, q.CapacityVsKernel)
			}
		}
		p.NDRMpps, p.NDRSpread = median(p.NDRRuns), spread(p.NDRRuns)
		p.PDRMpps, p.PDRSpread = median(p.PDRRuns), spread(p.PDRRuns)
		p.NDRGbps = p.NDRMpps * 1e6 * p.AvgFrame * 8 / 1e9
		p.DUTNsPerFrame, p.ProgNsPerFrame, p.DUTBusy = median(p.DUTNsRuns), median(p.ProgNsRuns), median(busy)
		p.CapacityMpps, p.StealShare = median(p.CapacityRuns), median(steal)
		p.OverloadMpps, p.OverloadLoss, p.OfferedMpps = median(over), median(loss), median(offered)
		p.KernelInRatio, p.FirstShare = median(kin), median(first)
		p.CapacityVsKernelRounds, p.CapacityVsKernelPaired = vsKernel, median(vsKernel)
		out[j] = p
	}
	fillRatios(out)
	return out
}
