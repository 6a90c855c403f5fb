package cli

// client.go: every command reaches the instance through the control API (the daemon, or the same
// server in-process when no daemon runs): commit a batch of operations, fetch the running state.

import (
	"context"
	"io"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/api"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
)

func connect() (pb.ControlClient, func(), error) {
	return api.Connect(api.Target{Dir: g.dir, Socket: g.socket, Addr: g.server, TLS: g.tls, Wait: g.wait, ReadOnly: g.readOnly})
}

func addOrReplace(replace bool) model.OpKind {
	if replace {
		return model.OpReplace
	}
	return model.OpAdd
}

// commit sends ops as one batch and prints what changed.
func commit(ops ...state.Op) error {
	c, done, err := connect()
	if err != nil {
		return err
	}
	defer done()
	req := &pb.CommitRequest{}
	for _, op := range ops {
		req.Ops = append(req.Ops, api.OpToPB(op))
	}
	rep, err := c.Commit(context.Background(), req)
	if err != nil {
		return apiErr(err)
	}
	return printDiff(api.DiffFromPB(rep.GetDiff()))
}

// fetchState reads the whole running state and its generation.
func fetchState() (model.State, uint64, error) {
	c, done, err := connect()
	if err != nil {
		return model.State{}, 0, err
	}
	defer done()
	stream, err := c.Show(context.Background(), &pb.ShowRequest{})
	if err != nil {
		return model.State{}, 0, apiErr(err)
	}
	var chunks []*pb.StateChunk
	for {
		ch, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return model.State{}, 0, apiErr(err)
		}
		chunks = append(chunks, ch)
	}
	return api.StateFromChunks(chunks)
}
