package api

// kernel.go: the Kernel RPC (the kernel mirror's report) and the hook that tells the mirror when the
// API changed something it depends on.

import (
	"context"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
)

// KernelReporter produces the kernel mirror's report.
type KernelReporter func() *pb.KernelReply

// SetKernel attaches the kernel mirror: report answers Kernel, changed runs after every API commit.
func (s *Server) SetKernel(report KernelReporter, changed func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kernel, s.changed = report, changed
}

func (s *Server) Kernel(ctx context.Context, req *pb.KernelRequest) (*pb.KernelReply, error) {
	s.mu.Lock()
	report := s.kernel
	s.mu.Unlock()
	if report == nil {
		return &pb.KernelReply{}, nil
	}
	return report(), nil
}

// notify tells the mirror (if any) that the API changed the state; called after a commit.
func (s *Server) notify() {
	if s.changed != nil {
		s.changed()
	}
}
