package examples_test

import "github.com/weftstudio/weft/checkpoint"

func checkpointListAll() checkpoint.ListOptions { return checkpoint.ListOptions{} }
