package cli

import "github.com/spf13/cobra"

func labCmd() *cobra.Command { return &cobra.Command{Use: "lab", Hidden: true} }
