print("panes")
