package api

// kernel.go: the Kernel RPC (the kernel mirror's report).

import (
	"context"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
)

// KernelReporter produces the kernel mirror's report.
type KernelReporter func() *pb.KernelReply

// SetKernel attaches the kernel mirror's report (the mirror itself follows the controller).
func (s *Server) SetKernel(report KernelReporter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kernel = report
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
