package benchrig

// tcp_test.go: the summary of `seg6x-bench tcp`'s rounds (medians, range, every run kept).

import (
	"reflect"
	"testing"
)

func TestTCPSummaryTakesMediansOfRounds(t *testing.T) {
	runs := []TCPRun{
		{Gbps: 20, Retransmits: 5, CPUNsPerByte: 0.7, SoftirqNsPerByte: 0.30, VsPlain: 0.90},
		{Gbps: 24, Retransmits: 100, CPUNsPerByte: 0.5, SoftirqNsPerByte: 0.20, VsPlain: 1.10},
		{Gbps: 22, Retransmits: 7, CPUNsPerByte: 0.6, SoftirqNsPerByte: 0.25, VsPlain: 0.95},
	}
	got := tcpSummary("seg6x_tc", 1, runs)
	want := TCPResult{Mode: "seg6x_tc", Flows: 1, Gbps: 22, Retransmits: 7, CPUNsPerByte: 0.6,
		SoftirqNsPerByte: 0.25, VsPlain: 0.95, GbpsMin: 20, GbpsMax: 24, Runs: runs}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("summary\n got %+v\nwant %+v", got, want)
	}
	// Two rounds: the mean of the middle two; the range from both.
	two := tcpSummary("plain", 4, runs[:2])
	if two.Gbps != 22 || two.GbpsMin != 20 || two.GbpsMax != 24 || two.Retransmits != 52 {
		t.Errorf("two rounds: %+v", two)
	}
}
