print("earshot-capture")
